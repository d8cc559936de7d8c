import { and, sql, type SQL } from 'drizzle-orm';
import { runStatement, type Database, type Statement } from '../../client';
import { contractCounts, contractDateCounts, contracts, contractUpdatedCounts } from '../../schema';
import {
  accessPaths,
  accessPathValues,
  accessShape,
  accessShapeName,
  counterPaths,
  countPaths,
  countPathValues,
  type AccessShape,
  type CallerScope,
} from '../access';
import { DEFAULT_ORDER, orderTerms, SORT_KEYS } from './expressions';
import { filterShape, filterShapeName, isCommonFilterShape, matchesNothing, searchOffIndex, type ContractFilters, type FilterShape } from './filters';
import { rangeChoice, rowsInPath, rowsInRange, rowsUpdatedSince } from './range-choice';

/**
 * How many contracts of a scope match, by the cheapest exact means the filters allow:
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
 * With `searchCap`, a count with q stops at that many matches (see CountResult.exact):
 * a substring search cannot be counted from counters, and counting every match of a
 * common word reads all of them.
 */
export interface CountOptions {
  /** Count at most this many matches of a text search (q), then stop. */
  searchCap?: number;
}

export type CountSource = 'counters' | 'date-counters' | 'updated-counters' | 'rows' | 'rows-capped';

type FilterName = FilterShape['names'][number];
const COUNTER_FILTERS: ReadonlySet<FilterName> = new Set(['status', 'autoRenewal']);
const DATE_FILTERS = {
  e: new Set<FilterName>(['expirationFrom', 'expirationTo']),
  r: new Set<FilterName>(['renewalFrom', 'renewalTo']),
} as const;

/** Which counters can answer these filters exactly, if any. */
export function countSource(filter: FilterShape, options: CountOptions = {}): CountSource {
  const names = filter.names;
  if (names.every((n) => COUNTER_FILTERS.has(n))) return 'counters';
  for (const dates of Object.values(DATE_FILTERS)) {
    if (names.some((n) => dates.has(n)) && names.every((n) => dates.has(n) || COUNTER_FILTERS.has(n))) return 'date-counters';
  }
  if (names.includes('updatedSince') && names.every((n) => n === 'updatedSince' || COUNTER_FILTERS.has(n))) return 'updated-counters';
  return names.includes('search') && options.searchCap !== undefined ? 'rows-capped' : 'rows';
}

/** The list's default order: a capped count of q reads each path in it. */
const listOrder = orderTerms(DEFAULT_ORDER, SORT_KEYS[DEFAULT_ORDER.field].expression, sql`${contracts.id}`);

const autoRenewalKey = sql`CASE WHEN ${sql.placeholder('autoRenewal')}::boolean THEN 1 ELSE 0 END`;

/** The status and auto_renewal filters on a counter table that has both keys. */
function statusClauses(t: typeof contractCounts | typeof contractUpdatedCounts, filter: FilterShape): SQL[] {
  const clauses: SQL[] = [];
  if (filter.names.includes('status')) clauses.push(sql`${t.status} = ${sql.placeholder('status')}`);
  // auto_renewal is shown (and filtered) only for completed contracts.
  if (filter.names.includes('autoRenewal')) clauses.push(sql`${t.status} = 'completed' AND ${t.autoRenewal} = ${autoRenewalKey}`);
  return clauses;
}

function countersQuery(db: Database, shape: AccessShape, filter: FilterShape) {
  const t = contractCounts;
  return db
    .select({ n: sql<number>`coalesce(sum(${t.n}), 0)::bigint`.as('n') })
    .from(t)
    .where(and(counterPaths(t, shape), ...statusClauses(t, filter)));
}

function dateCountersQuery(db: Database, shape: AccessShape, filter: FilterShape) {
  const t = contractDateCounts;
  const kind = filter.names.some((n) => DATE_FILTERS.e.has(n)) ? 'e' : 'r';
  const [from, to] = kind === 'e' ? ['expirationFrom', 'expirationTo'] : ['renewalFrom', 'renewalTo'];
  const clauses: SQL[] = [counterPaths(t, shape), sql`${t.kind} = ${sql.raw(`'${kind}'`)}`];
  if (filter.names.includes(from as FilterName)) clauses.push(sql`${t.day} >= ${sql.placeholder(from!)}::date`);
  if (filter.names.includes(to as FilterName)) clauses.push(sql`${t.day} <= ${sql.placeholder(to!)}::date`);
  // Only completed contracts have a date the API shows: another status matches none.
  if (filter.names.includes('status')) clauses.push(sql`${sql.placeholder('status')}::contract_status = 'completed'`);
  if (filter.names.includes('autoRenewal')) clauses.push(sql`${t.autoRenewal} = ${autoRenewalKey}`);
  return db.select({ n: sql<number>`coalesce(sum(${t.n}), 0)::bigint`.as('n') }).from(t).where(and(...clauses));
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
      .where(and(path, ...filter.clauses, sql`${contracts.updatedAt} < ${nextDay}`)),
  );
  const t = contractUpdatedCounts;
  const laterDays = db
    .select({ n: sql<number>`coalesce(sum(${t.n}), 0)::bigint`.as('n') })
    .from(t)
    .where(and(counterPaths(t, shape), sql`${t.day} > ${since}::date`, ...statusClauses(t, filter)));
  return partialDay.reduce<ReturnType<typeof laterDays.unionAll>>((q, b) => q.unionAll(b), laterDays as never);
}

function rowsQuery(db: Database, shape: AccessShape, filter: FilterShape, capped: boolean) {
  const count = sql<number>`count(*)::bigint`.as('n');
  if (!capped) {
    const selects = countPaths(shape).map((path) => db.select({ n: count }).from(contracts).where(and(path, ...filter.clauses)));
    const [first, ...rest] = selects as [(typeof selects)[number], ...typeof selects];
    return rest.reduce<ReturnType<typeof first.unionAll>>((q, b) => q.unionAll(b), first as never);
  }
  // At most cap + 1 matches in all: enough to tell "more than cap" from an exact count.
  // The paths are read one after the other (Append) and reading stops at the outer limit;
  // each path is limited too, so that the planner costs a path as the few rows it reads
  // (walking an index until enough match) rather than as all its matches.
  // Each path in list order, like a page, so that a common word is found by walking the
  // path's list index (a few thousand rows) and a rare one through the trigram index
  // (with a status other than completed, q is tested on the entries of that status's
  // index instead: filters.ts, notCompletedStatus).
  const capPlusOne = sql.placeholder('capPlusOne');
  const paths = accessPaths(shape);
  // A path with few rows in its range (a date window, updated_since, else the path itself;
  // its counters say) walks the range instead and tests the word on each row (searchOffIndex):
  // the walk in list order passed every row of the path outside the range, and Postgres
  // intersected the range with the trigram index's bitmap of the word, every contract in
  // every tenant that holds it (`expiring_within_days=90&q=initech` at 2M: 40 to 90 ms, of
  // which 50 ms a path for the bitmap; `updated_since=…&q=initech` 55 to 60 ms). A path with
  // more rows in the range walks in list order as before: a rare word among many rows is
  // still found through the trigram index.
  const range = searchRange(shape, filter);
  const selects = paths.flatMap((path, i) => {
    const walk = db
      .select({ one: sql<number>`1`.as('one') })
      .from(contracts)
      .where(and(path, ...filter.clauses, sql`${range.rows[i]} >= ${range.few}`))
      .orderBy(...listOrder)
      .limit(capPlusOne);
    const inRange = db
      .select({ one: sql<number>`1`.as('one') })
      .from(contracts)
      .where(and(path, ...searchOffIndex(filter), sql`${range.rows[i]} < ${range.few}`))
      .orderBy(...range.order)
      .limit(capPlusOne);
    return [walk, inRange];
  });
  const [first, ...rest] = selects as [(typeof selects)[number], ...typeof selects];
  const matches = rest
    .reduce<ReturnType<typeof first.unionAll>>((q, b) => q.unionAll(b), first as never)
    .limit(capPlusOne)
    .as('matches');
  return db.select({ n: count }).from(matches);
}

/**
 * Rows of a path in a range below which the capped count of q walks the range: testing
 * the word costs about 0.5 µs a row read in the range's index order, so a rare word (whose
 * trigram bitmap is small) loses at most 10 ms a path against the trigram index, and a
 * common one saves the bitmap's 50 ms. A 90-day window holds about 3,000 rows of a path at
 * 2M, 15,000 at 10M; updated_since a month back 21,000 to 100,000 of the heavy caller's
 * paths at 2M (those walk in list order, with the trigram index, as before).
 */
export const SEARCH_RANGE_ROWS = 20_000;

/** The range (a date window, else updated_since, else the whole path) a capped count of q may walk per path, with each path's rows in it. */
function searchRange(shape: AccessShape, filter: FilterShape): { rows: SQL[]; few: SQL; order: SQL[] } {
  const few = sql.raw(String(SEARCH_RANGE_ROWS));
  const choice = rangeChoice(filter, DEFAULT_ORDER);
  if (choice?.counters) {
    const date = choice.counters.kind === 'r' ? SORT_KEYS.renewal_date.expression : SORT_KEYS.expiration_date.expression;
    return { rows: rowsInRange(shape, choice), few, order: [sql`${date} ASC NULLS LAST`, sql`${contracts.id} ASC`] };
  }
  if (filter.names.includes('updatedSince')) {
    return { rows: rowsUpdatedSince(shape), few, order: [sql`${contracts.updatedAt} DESC`, sql`${contracts.id} DESC`] };
  }
  // No range: the path itself. A small path (a typical caller's) is walked whole in list
  // order sooner than the trigram index builds its bitmap of a common word over the whole
  // table, which Postgres prices as cheap (`q=initech` for a caller who sees 15,000 of
  // 10,000,000 contracts: 262 ms for the bitmap of 1.7 million matches, 5 ms walking).
  return { rows: rowsInPath(shape), few, order: listOrder };
}

export function contractCountStatement(
  scope: CallerScope,
  filters: ContractFilters,
  options: CountOptions = {},
): Statement<{ n: number | string }[]> | undefined {
  const shape = accessShape(scope, filters.organizationId);
  if (!shape || matchesNothing(filters)) return undefined;
  const filter = filterShape(filters);
  const source = countSource(filter, options);
  const build = (db: Database) => {
    if (source === 'counters') return countersQuery(db, shape, filter);
    if (source === 'date-counters') return dateCountersQuery(db, shape, filter);
    if (source === 'updated-counters') return updatedCountersQuery(db, shape, filter);
    return rowsQuery(db, shape, filter, source === 'rows-capped');
  };
  const capped = source === 'rows-capped';
  const values: Record<string, unknown> = { ...(capped ? accessPathValues(scope, shape) : countPathValues(scope, shape)), ...filter.values };
  if (capped) values.capPlusOne = options.searchCap! + 1;
  return {
    name: ['contracts.count', source, capped ? accessShapeName(shape) : shape.personal ? 'personal+orgs' : 'orgs', filterShapeName(filter)].join(' '),
    build: build as unknown as Statement<{ n: number }[]>['build'],
    values,
    prepareOnServer: isCommonFilterShape(filter),
  };
}

/** A list's total: exact, or (a capped text search) at least `total`. */
export interface ContractTotal {
  total: number;
  exact: boolean;
}

export async function countContractsBounded(
  db: Database,
  scope: CallerScope,
  filters: ContractFilters,
  options: CountOptions = {},
): Promise<ContractTotal> {
  const statement = contractCountStatement(scope, filters, options);
  if (!statement) return { total: 0, exact: true };
  const rows = await runStatement(db, statement);
  const total = rows.reduce((sum, r) => sum + Number(r.n), 0);
  const cap = options.searchCap;
  if (statement.name.startsWith('contracts.count rows-capped') && cap !== undefined && total > cap) return { total: cap, exact: false };
  return { total, exact: true };
}

/** The exact number of matching contracts. */
export async function countContracts(db: Database, scope: CallerScope, filters: ContractFilters): Promise<number> {
  return (await countContractsBounded(db, scope, filters)).total;
}
