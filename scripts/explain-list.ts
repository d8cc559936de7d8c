import { parseArgs } from 'node:util';
import { eq } from 'drizzle-orm';
import type { DatabaseHandle, Statement } from '@/db/client';
import type { CallerScope } from '@/db/queries/access';
import { contractStatement } from '@/db/queries/contracts/by-id';
import { detailColumns } from '@/db/queries/contracts/columns';
import type { ContractColumns } from '@/db/queries/contracts/columns';
import { countStatement } from '@/db/queries/contracts/count';
import { figuresStatement } from '@/db/queries/contracts/figures';
import type { ContractFilters } from '@/db/queries/contracts/filters';
import { pageStatements, type Cursor, type PageRequest } from '@/db/queries/contracts/page';
import { describePlan } from '@/db/queries/contracts/plan';
import { planContractList } from '@/db/queries/contracts/planning';
import { users } from '@/db/schema';
import { SCALE_CALLERS } from '@/db/seed/scale';
import { loadScope } from '@/server/access/scope';
import { toContractFilters, toSort } from '@/server/contracts/query';
import { listContractsInput } from '@/server/contracts/schemas';
import { SEARCH_TOTAL_CAP } from '@/server/contracts/service';
import { getDatabase } from '@/server/database';
import { errorCodeOf } from '@/server/errors';
import { COMBINATIONS, filterPairShapes, singleFilterShapes } from './bench/list-shapes';
import { StatementTexts } from './bench/statements';
import { runScript, UsageError } from './run-script';

// Prints the list's plan in words (db/queries/contracts/plan.ts), then EXPLAIN (ANALYZE,
// BUFFERS) of the exact figures, list-page and count statements the API sends for a caller of the scale dataset (seed it first: npm run db:seed -- --contracts 200000).
// --query takes the list endpoint's own query string, validated as the API validates it.
// --summary instead times every shape with at most one filter and one sort (both
// directions), plus a page deep in the list by cursor and by offset: the median of
// --runs executions of each statement, Postgres's own "Execution Time", as a table (the
// figures statement, for the shapes whose plan reads figures first, is a column of its own).
// Usage: npm run db:explain -- [--caller heavy|typical] [--query 'expiring_within_days=90&sort=expiration_date'] [--today YYYY-MM-DD]
//        npm run db:explain -- --summary [--caller heavy] [--today YYYY-MM-DD] [--runs 5] [--pairs]
// --pairs adds every pair of two filters (scripts/bench/list-shapes.ts) to the summary;
// --match TEXT keeps only the shapes whose query contains TEXT (and leaves out the deep pages).
// --access personal,ORG_ID,...|first-org explains the caller's scope as a key restricted to
// that access sees it (issue 23), built by restrictedScope() below; --also QUERY adds the
// same filters to every shape (e.g. --also 'organization_id={org}', the unrestricted
// caller's filter to the organisation a restricted key would be limited to).
const USAGE =
  "npm run db:explain -- [--caller heavy|typical] [--access all|first-org|personal,ORG_ID,...] [--query 'expiring_within_days=90&sort=expiration_date'] [--today YYYY-MM-DD] | --summary [--runs 5] [--pairs] [--match updated_since] [--also 'organization_id={org}']";

/**
 * The scope of a key restricted to `access` (a comma list of `personal`, organisation ids,
 * and `first-org` for the caller's first organisation), from the caller's own scope: the
 * same narrowing as db/queries/token-scope.ts for a key with access_all false (the
 * memberships that are in the chosen set; personal contracts only if chosen), for an
 * organisation whose policy lets members' keys read and no "remove access". Built here
 * rather than by inserting a key, so that the script needs no write and no newer schema
 * than the contracts' (a scale database seeded before restricted keys explains too).
 * An organisation the caller is not in is refused, as the key's creation refuses it.
 */
function restrictedScope(scope: CallerScope, access: string): CallerScope {
  if (access === 'all') return scope;
  const items = access.split(',').map((item) => item.trim()).filter(Boolean);
  if (items.length === 0) throw new UsageError(`--access must be all, or a list of personal, first-org and organisation ids\n${USAGE}`);
  const chosen = new Set<string>();
  for (const item of items) {
    if (item === 'personal') continue;
    const id = item === 'first-org' ? scope.organizationIds[0] : item;
    if (id === undefined || !scope.organizationIds.includes(id)) {
      throw new UsageError(`--access ${item}: the caller is not a member of ${item === 'first-org' ? 'any organisation' : 'this organisation'}\n${USAGE}`);
    }
    chosen.add(id);
  }
  return { userId: scope.userId, personal: items.includes('personal'), organizationIds: scope.organizationIds.filter((id) => chosen.has(id)) };
}

/** How a scope reads in the header line of the output. */
function describeAccess(access: string, scope: CallerScope): string {
  if (access === 'all') return `unrestricted (personal + ${scope.organizationIds.length} organisations)`;
  return `restricted to ${[...(scope.personal === false ? [] : ['personal']), ...scope.organizationIds].join(', ') || 'nothing'}`;
}

interface Plan {
  'QUERY PLAN': unknown;
}

async function executionMs(handle: DatabaseHandle, text: string, params: unknown[]): Promise<number> {
  const [row] = await handle.query<Plan>(`EXPLAIN (ANALYZE, FORMAT JSON) ${text}`, params);
  const plan = typeof row!['QUERY PLAN'] === 'string' ? JSON.parse(row!['QUERY PLAN'] as string) : row!['QUERY PLAN'];
  return (plan as [{ 'Execution Time': number }])[0]['Execution Time'];
}

/** The statements the API runs for one list request, from the plan it makes (reading its figures as the API does). */
async function plannedStatements(handle: DatabaseHandle, scope: CallerScope, filters: ContractFilters, page: PageRequest, columns?: ContractColumns) {
  const list = await planContractList(handle.db, scope, filters, page, { searchCap: SEARCH_TOTAL_CAP });
  if (!list) return undefined;
  const { first, thenNulls } = pageStatements(list, page, columns);
  const figures = figuresStatement(scope, list.shape, list.filter, list.plan.needs);
  return { list, figures: figures as Statement<unknown> | undefined, page: first as Statement<unknown>, thenNulls: thenNulls as Statement<unknown> | undefined, count: countStatement(list) as Statement<unknown> | undefined };
}

/** A page's (first) statement, planned as the API plans it. */
async function pageStatementOf(handle: DatabaseHandle, scope: CallerScope, filters: ContractFilters, page: PageRequest, columns?: ContractColumns) {
  return (await plannedStatements(handle, scope, filters, page, columns))?.page;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function timed(handle: DatabaseHandle, texts: StatementTexts, statement: Statement<unknown> | undefined, runs: number) {
  if (!statement) return 0;
  const { text, params } = texts.compile(statement);
  const samples: number[] = [];
  for (let i = 0; i < runs; i++) {
    try {
      samples.push(await executionMs(handle, text, params));
    } catch (error) {
      // Past the statement timeout (DATABASE_STATEMENT_TIMEOUT_MS, as the API would): the row
      // says so instead of ending the table. Any other error is a bug and ends it.
      if (errorCodeOf(error, (code) => code === '57014') === undefined) throw error;
      return Number.POSITIVE_INFINITY;
    }
  }
  return median(samples);
}

function parseQuery(query: string) {
  const parsed = listContractsInput.safeParse(Object.fromEntries(new URLSearchParams(query)));
  if (!parsed.success) throw new UsageError(`--query ${query}: ${parsed.error.issues.map((i) => i.message).join('; ')}`);
  return parsed.data;
}

async function summary(
  handle: DatabaseHandle,
  scope: CallerScope,
  today: string | undefined,
  runs: number,
  pairs: boolean,
  match: string | undefined,
  also: string,
) {
  const org = scope.organizationIds[0] ?? '';
  // A scope without organisations (--access personal) has no organisation to filter to.
  const wanted = (queries: string[]) =>
    queries.filter((q) => (match === undefined || q.includes(match)) && (org !== '' || !q.includes('{org}')));
  const texts = new StatementTexts(handle.db);
  const fmt = (ms: number) => (Number.isFinite(ms) ? ms.toFixed(2) : 'timeout');
  // Every shape with --also's filters added (a parameter both name: --also's value wins).
  const parseShape = (query: string) => parseQuery([query, also].filter(Boolean).join('&').replaceAll('{org}', org));
  const row = async (query: string) => {
    const input = parseShape(query);
    const filters = toContractFilters(input, today);
    const planned = await plannedStatements(handle, scope, filters, { limit: input.limit + 1, offset: input.offset, sort: toSort(input.sort) });
    const figures = await timed(handle, texts, planned?.figures, runs);
    const page = await timed(handle, texts, planned?.page, runs);
    const count = await timed(handle, texts, planned?.count, runs);
    console.log(`| \`${query || '(none)'}\` | ${planned?.figures ? fmt(figures) : ''} | ${fmt(page)} | ${fmt(count)} | ${fmt(figures + page + count)} |`);
    return figures + page + count;
  };
  const header = (first: string) => `| ${first} | figures ms | page ms | count ms | figures + page + count ms |\n| --- | --- | --- | --- | --- |`;
  console.log(header('Query'));
  let worst = { query: '', ms: 0 };
  for (const query of wanted(singleFilterShapes())) {
    const ms = await row(query);
    if (ms > worst.ms) worst = { query, ms };
  }
  console.log(`\nWorst single-filter shape: \`${worst.query || '(none)'}\` ${fmt(worst.ms)} ms\n`);
  console.log(header('Combination'));
  for (const query of wanted(COMBINATIONS)) await row(query);
  if (pairs) {
    console.log(`\n${header('Two filters')}`);
    let worstPair = { query: '', ms: 0 };
    for (const query of wanted(filterPairShapes())) {
      const ms = await row(query);
      if (ms > worstPair.ms) worstPair = { query, ms };
    }
    console.log(`\nWorst pair of filters: \`${worstPair.query}\` ${fmt(worstPair.ms)} ms`);
  }

  if (match !== undefined) return;
  // The other reads of a contract: get-one (the newest contract the caller sees) and the
  // export's first page (1,000 rows with the detail columns, the service's page size), the
  // figures the 10,000,000-contract goal compares with 200,000 (docs/query-plans.md).
  console.log('\n| Other reads | ms |\n| --- | --- |');
  const newestPage = texts.compile((await pageStatementOf(handle, scope, {}, { limit: 1 }))!);
  const newest = await handle.query<{ id: string }>(`select id from (${newestPage.text}) p`, newestPage.params);
  if (newest[0]) console.log(`| get-one | ${fmt(await timed(handle, texts, contractStatement(scope, newest[0].id) as Statement<unknown>, runs))} |`);
  for (const sort of ['', 'sort=expiration_date']) {
    const input = parseShape(sort);
    const exportPage = await pageStatementOf(handle, scope, toContractFilters(input, today), { limit: 1000, sort: toSort(input.sort) }, detailColumns);
    console.log(`| export first page (1,000 rows${sort ? `, ${sort}` : ''}) | ${fmt(await timed(handle, texts, exportPage, runs))} |`);
  }
  // Deep pages: the 10,000th page of 50 (or the last one the caller has) by offset and by
  // cursor (the cursor is the row just before it, as the previous page would have named).
  console.log('\n| Deep page (limit 50) | page ms |\n| --- | --- |');
  for (const sort of ['', 'sort=title', 'sort=-contract_value']) {
    const input = parseShape(sort);
    const filters = toContractFilters(input, today);
    const depth = Math.min(499_950, 10_000 * 50);
    let at = depth;
    let before: { sortKeyText: string | null; id: string } | undefined;
    // The caller may see fewer rows: halve until a row exists there.
    while (at > 0 && !before) {
      const statement = (await pageStatementOf(handle, scope, filters, { limit: 1, offset: at - 1, sort: toSort(input.sort) }))!;
      const { text, params } = texts.compile(statement);
      [before] = await handle.query<{ sortKeyText: string | null; id: string }>(
        `select sort_key_text as "sortKeyText", id from (${text}) p`,
        params,
      );
      if (!before) at = Math.floor(at / 2);
    }
    if (!before) continue;
    const cursor: Cursor = { key: before.sortKeyText, id: before.id };
    const first = await timed(handle, texts, await pageStatementOf(handle, scope, filters, { limit: 51, sort: toSort(input.sort) }), runs);
    const byCursor = await timed(handle, texts, await pageStatementOf(handle, scope, filters, { limit: 51, after: cursor, sort: toSort(input.sort) }), runs);
    const byOffset = await timed(handle, texts, await pageStatementOf(handle, scope, filters, { limit: 51, offset: at, sort: toSort(input.sort) }), runs);
    console.log(`| \`${sort || '(default)'}\` first page | ${fmt(first)} |`);
    console.log(`| \`${sort || '(default)'}\` after row ${at} by cursor | ${fmt(byCursor)} |`);
    console.log(`| \`${sort || '(default)'}\` at offset ${at} | ${fmt(byOffset)} |`);
  }
}

runScript(async () => {
  const { values } = parseArgs({
    options: {
      caller: { type: 'string', default: 'heavy' },
      query: { type: 'string', default: '' },
      today: { type: 'string' },
      summary: { type: 'boolean', default: false },
      runs: { type: 'string', default: '5' },
      pairs: { type: 'boolean', default: false },
      match: { type: 'string' },
      access: { type: 'string', default: 'all' },
      also: { type: 'string', default: '' },
    },
  });
  const email = SCALE_CALLERS[values.caller as keyof typeof SCALE_CALLERS];
  if (!email) throw new UsageError(`--caller must be heavy or typical\n${USAGE}`);
  const runs = Number(values.runs);
  if (!Number.isInteger(runs) || runs < 1 || runs > 101) throw new UsageError(`--runs must be a whole number from 1 to 101\n${USAGE}`);
  const input = parseQuery(values.query);
  const handle = await getDatabase();
  const { db } = handle;
  const [user] = await db.select({ id: users.id }).from(users).where(eq(users.email, email));
  if (!user) throw new UsageError(`${email} not found: run npm run db:seed -- --contracts 100000 first`);
  const scope = restrictedScope((await loadScope(db, user.id)).scope, values.access);
  const who = `caller ${email}, ${describeAccess(values.access, scope)}`;
  const [{ n: rows } = { n: 0 }] = await handle.query<{ n: number }>('select count(*)::int as n from contracts');
  if (values.summary) {
    console.log(`${rows} contracts in the table; ${who}${values.also ? `; every shape with ${values.also}` : ''}; median of ${runs} runs (ms of Postgres execution)\n`);
    await summary(handle, scope, values.today, runs, values.pairs, values.match, values.also);
    await handle.close();
    return;
  }
  const filters = toContractFilters(input, values.today);
  console.log(`${rows} contracts in the table; ${who}; query: ${values.query || '(none)'}\n`);

  const texts = new StatementTexts(db);
  const page = { limit: input.limit, offset: input.offset, sort: toSort(input.sort) };
  const planned = await plannedStatements(handle, scope, filters, page);
  if (!planned) {
    console.log('No statement: the organisation is not the caller\'s, or the filters contradict each other (an empty page, total 0).');
    await handle.close();
    return;
  }
  const pathNames = [...(planned.list.shape.personal ? ['personal'] : []), ...planned.list.shape.organizationIds.map((id) => `organisation ${id}`)];
  console.log(`== The plan\n${describePlan(planned.list.plan, pathNames).join('\n')}\n`);
  const statements: Record<string, Statement<unknown> | undefined> = {
    'figures (read first)': planned.figures,
    [`list page (limit ${input.limit}, offset ${input.offset})`]: planned.page,
    count: planned.count,
  };
  for (const [label, statement] of Object.entries(statements)) {
    if (!statement) continue;
    const { text, params } = texts.compile(statement);
    console.log(`== ${label}: ${statement.name}\n${text}\n`);
    const plan = await handle.query<{ 'QUERY PLAN': string }>(`EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) ${text}`, params);
    console.log(`${plan.map((r) => r['QUERY PLAN']).join('\n')}\n`);
  }
  await handle.close();
});
