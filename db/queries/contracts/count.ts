import { and, sql, type SQL } from 'drizzle-orm';
import { runStatement, type Database, type Statement } from '../../client';
import { contractCounts, contractDateCounts, contracts, contractUpdatedCounts } from '../../schema';
import { accessPaths, accessPathValues, accessShapeName, counterPaths, countPaths, countPathValues, type AccessShape, type CallerScope } from '../access';
import { DEFAULT_ORDER, isCompleted, isFresh, isStale, orderTerms, SORT_KEYS, type DateWindow } from './expressions';
import { COUNTER_KIND } from './figures';
import { filterClauses, FILTERS, filterShapeName, isCommonFilterShape, searchOffIndex, staleFilterClauses, windowBounds, type ContractFilters, type FilterShape } from './filters';
import { readsStaleRows, type Figures, type ListPlan, type SearchRange } from './plan';
import { planContractList, planWithFigures, type CountOptions, type PlannedList } from './planning';

export type { CountOptions } from './planning';

/**
 * How many contracts of a scope match, by the cheapest exact means the filters allow (the
 * plan's `total`: plan.ts, countSource):
 *
 * - no filter, a status, an organisation, auto_renewal (any of them together): the sums of
 *   the scope's counters (contract_counts, kept by triggers, migration 0007), a dozen rows
 *   per access path whatever the caller sees;
 * - an expiration or a renewal window, with those: the per-day counters of that date
 *   (contract_date_counts), at most one row per day of the window, path and auto_renewal;
 * - updated_since, with those: the rows updated from `since` to the end of its UTC day
 *   counted by index (at most a day's updates per path), plus the per-day counters of
 *   updated_at (contract_updated_counts, migrations 0008 and 0009) of every later day, a
 *   few rows per day and path (one per status and auto_renewal present): exact, since the
 *   counters hold every contract's day;
 * - anything else (q, updated_since with a window, both windows at once): the
 *   matching rows counted, one count per access path (personal, and all organisations at
 *   once), summed.
 *
 * With `searchCap`, a count with q stops at that many matches (ContractTotal.exact): a
 * substring search cannot be counted from counters, and counting every match of a common
 * word reads all of them.
 */

/** The list's default order: a capped count of q reads each path in it. */
const listOrder = orderTerms(DEFAULT_ORDER, SORT_KEYS[DEFAULT_ORDER.field].expression, sql`${contracts.id}`);

const autoRenewalKey = sql`CASE WHEN ${sql.placeholder('autoRenewal')}::boolean THEN 1 ELSE 0 END`;

/** The status and auto_renewal filters on a counter table that has both keys. */
function statusClauses(t: typeof contractCounts | typeof contractUpdatedCounts, filter: FilterShape): SQL[] {
  const clauses: SQL[] = [];
  if (filter.names.includes('status')) clauses.push(sql`${t.status} = ${sql.placeholder('status')}`);
  // auto_renewal is shown (and filtered) only for completed contracts.
  if (filter.names.includes('autoRenewal')) clauses.push(sql`${isCompleted(t.status)} AND ${t.autoRenewal} = ${autoRenewalKey}`);
  return clauses;
}

function countersQuery(db: Database, shape: AccessShape, filter: FilterShape) {
  const t = contractCounts;
  return db
    .select({ n: sql<number>`coalesce(sum(${t.n}), 0)::bigint`.as('n') })
    .from(t)
    .where(and(counterPaths(t, shape), ...statusClauses(t, filter)));
}

/**
 * A window's per-day counters. A rolling date's counters hold the stored dates, right for
 * every row but a stale one (expressions.ts, isStale): the path's stale rows in the window
 * by their stored date are taken off, and those in it by the rule added (the rolling
 * index's range before today, a day's renewals when the job runs).
 */
function dateCountersQuery(db: Database, shape: AccessShape, filter: FilterShape, stale: boolean) {
  const t = contractDateCounts;
  const date = (['expiration', 'renewal', 'notice'] as DateWindow[]).find((d) => windowBounds(filter.names, d).length > 0)!;
  const clauses: SQL[] = [counterPaths(t, shape), sql`${t.kind} = ${sql.raw(`'${COUNTER_KIND[date]}'`)}`];
  for (const bound of windowBounds(filter.names, date)) {
    clauses.push(sql`${t.day} ${sql.raw(FILTERS[bound].window!.bound === 'from' ? '>=' : '<=')} ${sql.placeholder(bound)}::date`);
  }
  // Only completed contracts have a date the API shows: another status matches none.
  if (filter.names.includes('status')) clauses.push(isCompleted(sql`${sql.placeholder('status')}::contract_status`));
  if (filter.names.includes('autoRenewal')) clauses.push(sql`${t.autoRenewal} = ${autoRenewalKey}`);
  const counters = db.select({ n: sql<number>`coalesce(sum(${t.n}), 0)::bigint`.as('n') }).from(t).where(and(...clauses));
  if (!stale || !FILTERS[windowBounds(filter.names, date)[0]!].rolled) return counters;
  const corrections = countPaths(shape).flatMap((path) => [
    // `IS TRUE` keeps the window's clauses off the window's index: its whole range was read
    // to find the few stale rows, where the rolling index holds just those (3.7 ms at 2M).
    db.select({ n: sql<number>`-count(*)::bigint`.as('n') }).from(contracts).where(and(path, isStale, sql`(${and(...filterClauses(filter))}) IS TRUE`)),
    db.select({ n: sql<number>`count(*)::bigint`.as('n') }).from(contracts).where(and(path, isStale, ...staleFilterClauses(filter))),
  ]);
  return corrections.reduce<ReturnType<typeof counters.unionAll>>((q, b) => q.unionAll(b), counters as never);
}

/**
 * updated_since: since's UTC day is partly in the window, so its rows are counted (one
 * index range of (path, updated_at) per path, at most that day's updates, with the other
 * filters' clauses); every later day is whole, summed from the path's per-day counters of
 * that status and auto_renewal. The day is updated_at's in UTC (the migration's `AT TIME
 * ZONE 'UTC'`), whatever the session's time zone.
 */
function updatedCountersQuery(db: Database, shape: AccessShape, filter: FilterShape) {
  const since = sql`(${sql.placeholder('updatedSince')}::timestamptz AT TIME ZONE 'UTC')`;
  const nextDay = sql`((${since}::date + 1)::timestamp AT TIME ZONE 'UTC')`;
  const count = sql<number>`count(*)::bigint`.as('n');
  const partialDay = countPaths(shape).map((path) =>
    db
      .select({ n: count })
      .from(contracts)
      .where(and(path, ...filterClauses(filter), sql`${contracts.updatedAt} < ${nextDay}`)),
  );
  const t = contractUpdatedCounts;
  const laterDays = db
    .select({ n: sql<number>`coalesce(sum(${t.n}), 0)::bigint`.as('n') })
    .from(t)
    .where(and(counterPaths(t, shape), sql`${t.day} > ${since}::date`, ...statusClauses(t, filter)));
  return partialDay.reduce<ReturnType<typeof laterDays.unionAll>>((q, b) => q.unionAll(b), laterDays as never);
}

/** A rolling filter's rows: counted only where fresh (as the page reads them), and the stale ones apart when there are any. */
interface Rolling {
  fresh: boolean;
  stale: boolean;
}

/**
 * Each count path's matching rows; with a rolling filter, its fresh rows (as the page reads
 * them) and, when the figures found stale rows, its stale rows (expressions.ts, isStale),
 * each by its own clauses.
 */
function rowsQuery(db: Database, shape: AccessShape, filter: FilterShape, rolling: Rolling) {
  const count = sql<number>`count(*)::bigint`.as('n');
  const selects = countPaths(shape).flatMap((path) => [
    db
      .select({ n: count })
      .from(contracts)
      .where(and(path, rolling.fresh ? isFresh : undefined, ...filterClauses(filter))),
    ...(rolling.stale ? [db.select({ n: count }).from(contracts).where(and(path, isStale, ...staleFilterClauses(filter)))] : []),
  ]);
  const [first, ...rest] = selects as [(typeof selects)[number], ...typeof selects];
  return rest.reduce<ReturnType<typeof first.unionAll>>((q, b) => q.unionAll(b), first as never);
}

const WINDOW_SORT = { expiration: 'expiration_date', renewal: 'next_renewal_date', notice: 'notice_deadline' } as const satisfies Record<DateWindow, keyof typeof SORT_KEYS>;

/** The order a capped count reads a path's search range in (plan.ts, SearchRange). */
function rangeOrder(range: SearchRange): SQL[] {
  if (range.kind === 'window') {
    const date = SORT_KEYS[WINDOW_SORT[range.date]].expression;
    return [sql`${date} ASC NULLS LAST`, sql`${contracts.id} ASC`];
  }
  return range.kind === 'updated' ? [sql`${contracts.updatedAt} DESC`, sql`${contracts.id} DESC`] : listOrder;
}

/**
 * q counted up to cap + 1 matches in all: enough to tell "more than cap" from an exact
 * count. The paths are read one after the other (Append) and reading stops at the outer
 * limit; each path is limited too, so that the planner costs a path as the few rows it
 * reads rather than as all its matches. Each path as its plan says (plan.ts,
 * SEARCH_RANGE_ROWS): a path with few rows in its range reads the range, the word tested
 * on each row (searchOffIndex); the others walk in list order, like a page, so that a
 * common word is found soon and a rare one through the trigram index (with a status other
 * than completed, q is tested on the entries of that status's index: filters.ts).
 */
function cappedRowsQuery(db: Database, shape: AccessShape, filter: FilterShape, total: Extract<ListPlan['total'], { source: 'rows-capped' }>, rolling: Rolling) {
  const count = sql<number>`count(*)::bigint`.as('n');
  const capPlusOne = sql.placeholder('capPlusOne');
  const fresh = rolling.fresh ? isFresh : undefined;
  const selects = accessPaths(shape).map((path, i) => {
    const inRange = total.reads[i] === 'range';
    return db
      .select({ one: sql<number>`1`.as('one') })
      .from(contracts)
      .where(and(path, ...(inRange ? searchOffIndex(filter) : filterClauses(filter)), fresh))
      .orderBy(...(inRange ? rangeOrder(total.range) : listOrder))
      .limit(capPlusOne);
  });
  // With a rolling filter, each path's stale rows too (few: the word tested on each).
  if (rolling.stale) selects.push(...accessPaths(shape).map((path) => db.select({ one: sql<number>`1`.as('one') }).from(contracts).where(and(path, isStale, ...staleFilterClauses(filter))).limit(capPlusOne)));
  const [first, ...rest] = selects as [(typeof selects)[number], ...typeof selects];
  const matches = rest
    .reduce<ReturnType<typeof first.unionAll>>((q, b) => q.unionAll(b), first as never)
    .limit(capPlusOne)
    .as('matches');
  return db.select({ n: count }).from(matches);
}

/** The statement of a planned total; undefined when the figures decided it. */
export function countStatement(list: PlannedList): Statement<{ n: number | string }[]> | undefined {
  const { plan, scope, shape, filter } = list;
  const total = plan.total;
  if (total.source === 'figures') return undefined;
  const capped = total.source === 'rows-capped';
  // A rolling filter's stale rows are counted apart (a rolling sort changes no total).
  const stale = plan.page.stale && filter.rolled;
  const rolling: Rolling = { fresh: filter.rolled && readsStaleRows(plan.request), stale };
  const build = (db: Database) => {
    if (total.source === 'rows-capped') return cappedRowsQuery(db, shape, filter, total, rolling);
    if (total.source === 'counters') return countersQuery(db, shape, filter);
    if (total.source === 'date-counters') return dateCountersQuery(db, shape, filter, stale);
    if (total.source === 'updated-counters') return updatedCountersQuery(db, shape, filter);
    return rowsQuery(db, shape, filter, rolling);
  };
  const values: Record<string, unknown> = { ...(capped ? accessPathValues(scope, shape) : countPathValues(scope, shape)), ...filter.values };
  if (total.source === 'rows-capped') values.capPlusOne = total.cap + 1;
  const reads = total.source === 'rows-capped' ? [total.reads.every((r) => r === total.reads[0]) ? total.reads[0]! : total.reads.join(',')] : [];
  return {
    name: ['contracts.count', total.source, capped ? accessShapeName(shape) : shape.personal ? 'personal+orgs' : 'orgs', filterShapeName(filter), ...reads, ...(stale ? ['stale'] : [])].join(' '),
    build: build as unknown as Statement<{ n: number }[]>['build'],
    values,
    prepareOnServer: isCommonFilterShape(filter),
  };
}

/** A total's statement planned with given figures, for tools and tests (undefined when nothing can match). */
export function contractCountStatement(scope: CallerScope, filters: ContractFilters, options: CountOptions = {}, figures: Figures = {}): Statement<{ n: number | string }[]> | undefined {
  const list = planWithFigures(scope, filters, undefined, options, figures);
  return list && countStatement(list);
}

/** A list's total: exact, or (a capped text search) at least `total`. */
export interface ContractTotal {
  total: number;
  exact: boolean;
}

/** Reads a planned total. */
export async function countPlanned(db: Database, list: PlannedList): Promise<ContractTotal> {
  const plan = list.plan.total;
  if (plan.source === 'figures') return { total: plan.total, exact: plan.exact };
  const rows = await runStatement(db, countStatement(list)!);
  const total = rows.reduce((sum, r) => sum + Number(r.n), 0);
  if (plan.source === 'rows-capped' && total > plan.cap) return { total: plan.cap, exact: false };
  return { total, exact: true };
}

export async function countContractsBounded(
  db: Database,
  scope: CallerScope,
  filters: ContractFilters,
  options: CountOptions = {},
): Promise<ContractTotal> {
  const list = await planContractList(db, scope, filters, undefined, options);
  return list ? countPlanned(db, list) : { total: 0, exact: true };
}

/** The exact number of matching contracts. */
export async function countContracts(db: Database, scope: CallerScope, filters: ContractFilters): Promise<number> {
  return (await countContractsBounded(db, scope, filters)).total;
}
