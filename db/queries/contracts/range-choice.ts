import { and, sql, type SQL } from 'drizzle-orm';
import { contractCounts, contractDateCounts, contracts, contractUpdatedCounts } from '../../schema';
import { accessPaths, counterPathKeys, type AccessShape } from '../access';
import type { Sort } from './expressions';
import type { FilterShape } from './filters';

/**
 * Where a filter is one range of an index of each access path (updated_since, a date
 * window), a path with few rows in that range is cheaper read as the range than walked in
 * another order: the choice, and each path's rows in the range, for the page statement
 * (page.ts) and the capped count of a text search (count.ts).
 */

/**
 * updated_since is one range of an index of each access path, (path, updated_at, id).
 * Sorted by another key, a path's walk of the sort's index keeps only the rows in that
 * range, and a path with few of them (or none) is walked to its end before its branch
 * yields enough rows (sort=title: 80,000 rows in each organisation without a recent
 * update, 120 ms at 2M). So each path chooses: with fewer rows in the range than
 * FEW_MATCHES it reads the range and sorts it (at most that many rows); with more, it walks
 * the sort's index, which then finds a page's rows soon unless they are correlated with the
 * order. The range's rows are counted up to FEW_MATCHES in that index (an index-only scan,
 * 0.2 ms). Any other filter (a status, auto_renewal, a date window, q) only removes rows
 * from the range, so the choice is the same with it: the range read stays within
 * FEW_MATCHES rows, each tested against every filter, and the count stays index-only (it
 * does not test them). With another filter, at 2M: 58 to 202 ms a page before, 1 to 45 ms
 * after (docs/query-plans.md, "Combinations of filters").
 *
 * A date window chooses too, but only where its order or q makes the walk slow (below,
 * WINDOW_FEW_MATCHES): sorted by an unrelated key, a walk finds a window's rows soon, and
 * the per-path decisions (12 scalar subqueries) would add about 1 ms to every such page.
 */
export const FEW_MATCHES = 1000;

/**
 * A date window (expiring_within_days, renewing_within_days, expires_before, …) sorted by
 * the OTHER date: a renewal date is an expiration date minus a notice period, so the two
 * orders agree and a window's rows sit together in the other date's order, at its far end
 * for a descending sort: each path's walk read almost every completed contract of the path
 * before its first match (`expiring_within_days=90&sort=-renewal_date`: 475 ms at 2M, 1.7 s
 * at 10M). So each path chooses, as for updated_since: with fewer than WINDOW_FEW_MATCHES
 * rows in the window it reads the window's range from a covering index (migration 0012,
 * `(path, date, id) INCLUDE (status, expiration_date, renewal_date, auto_renewal)`: an
 * index-only scan, no row read), sorts those entries by the other date, and reads only the
 * page's rows; with more it walks. At 2M the heavy caller's paths hold about 3,000 rows of
 * a 90-day window, at 10M about 15,000: both read the range. Without q, a window sorted by
 * any other key still walks (those orders are not correlated with a date, the walk finds
 * its matches soon), and so does a window sorted by its own date (a range of its own
 * index); with q, see searchWindow.
 */
export const WINDOW_FEW_MATCHES = 20_000;

/*
 * q with a status other than completed, sorted by anything but created_at
 * ('walk-or-matches'): each path's matches are counted up to FEW_MATCHES on the entries of
 * its index of those contracts (contracts_*_not_completed_idx, which carries the search
 * text: index-only, about 0.2 µs an entry); with fewer, the path reads them (ids and sort
 * keys) and sorts them; with more, it walks the sort's index, which then finds a page's
 * matches soon. A word in none of those titles was tested on every row of the walk, heap
 * row by heap row, or intersected with the table-wide trigram bitmap of the word
 * (`q=initech&status=processing&sort=title`: 33 ms at 200,000 contracts, 410 to 540 ms at
 * 2M). Sorted by created_at, that index is the walk's own order (page.ts walks it
 * index-only).
 */

type WindowName = 'expirationFrom' | 'expirationTo' | 'renewalFrom' | 'renewalTo';
const EXPIRATION_WINDOW: WindowName[] = ['expirationFrom', 'expirationTo'];
const RENEWAL_WINDOW: WindowName[] = ['renewalFrom', 'renewalTo'];
const WINDOWS: Partial<Record<Sort['field'], WindowName[]>> = {
  // sorted by renewal date: the expiration window's range; and the other way round.
  renewal_date: EXPIRATION_WINDOW,
  expiration_date: RENEWAL_WINDOW,
};

/**
 * A date window with q, sorted by anything: the rows that contain the word are spread
 * through every order, but those in the window are few (a 90-day window holds 3,000 rows
 * of a path at 2M), while a walk of the sort's index tested the word on every row of the
 * path until enough were in the window too (`expiring_within_days=90&q=initech`: 236 ms at
 * 2M, reading 200,000 rows). So each path chooses as for a window sorted by the other date:
 * a window under WINDOW_FEW_MATCHES rows is read as a range of its date's index (each row
 * read once for the word) and sorted; a larger one walks. With both windows, the one of
 * the other date than the sort's, else the expiration window.
 */
function searchWindow(filter: FilterShape, sort: Sort): WindowName[] {
  if (!filter.names.includes('search')) return [];
  for (const window of [WINDOWS[sort.field] ?? [], EXPIRATION_WINDOW, RENEWAL_WINDOW]) {
    const present = window.filter((name) => filter.names.includes(name));
    if (present.length > 0) return present;
  }
  return [];
}

/** How each path chooses between walking and reading a range, or undefined when every path walks. */
export interface RangeChoice {
  /** Part of the statement's name. */
  name: 'walk-or-range' | 'walk-or-window' | 'walk-or-matches';
  /** The range's clauses (those of the filter shape). */
  clauses: SQL[];
  /** A path with fewer rows in the range reads the range. */
  few: number;
  /** The range is read as ids and sort keys from a covering index, then the page's rows (a deferred join). */
  deferred: boolean;
  /**
   * A window's rows per path come from the per-day counters (contract_date_counts, kept by
   * triggers): one counter row per day of the window, whatever the number of contracts. A
   * capped index count up to WINDOW_FEW_MATCHES read 20,000 index entries per path for a
   * wide window, twice (once for each alternative's guard).
   */
  counters?: { kind: 'e' | 'r'; window: WindowName[] };
}

export function rangeChoice(filter: FilterShape, sort: Sort): RangeChoice | undefined {
  // A window sorted by the other date first, even with updated_since: the window's range
  // is bounded by WINDOW_FEW_MATCHES, while updated_since's choice walks a path with 1,000
  // rows or more in its range, and that walk meets the window's rows last
  // (`expiring_within_days=90&updated_since=…&sort=-renewal_date`: 45 ms a page at 2M).
  const otherDate = (WINDOWS[sort.field] ?? []).filter((name) => filter.names.includes(name));
  // updated_since (with any other filter), sorted by another key.
  if (otherDate.length === 0 && filter.names.includes('updatedSince') && sort.field !== 'updated_at') {
    return { name: 'walk-or-range', clauses: [filter.clauses[filter.names.indexOf('updatedSince')]!], few: FEW_MATCHES, deferred: false };
  }
  const window = otherDate.length > 0 ? otherDate : searchWindow(filter, sort);
  if (window.length === 0) {
    if (filter.notCompleted && sort.field !== 'created_at' && !filter.names.includes('updatedSince')) {
      // The named filters' clauses only: not the null keys' (page.ts, withNullKeys), which
      // names the sort key and would send every entry to the heap; with a status other
      // than completed every such key is null anyway.
      return { name: 'walk-or-matches', clauses: filter.clauses.slice(0, filter.names.length), few: FEW_MATCHES, deferred: true };
    }
    return undefined;
  }
  return {
    name: 'walk-or-window',
    clauses: window.map((name) => filter.clauses[filter.names.indexOf(name)]!),
    few: WINDOW_FEW_MATCHES,
    deferred: true,
    counters: { kind: window[0]!.startsWith('expiration') ? 'e' : 'r', window },
  };
}

/**
 * Each access path's rows in the choice's range, in the order of accessPaths(): from the
 * per-day counters for a window, counted up to `few` in the range's index otherwise.
 */
export function rowsInRange(shape: AccessShape, choice: RangeChoice): SQL[] {
  const counted = choice.counters;
  if (!counted) {
    const few = sql.raw(String(choice.few));
    return accessPaths(shape).map((where) => sql`(SELECT count(*) FROM (SELECT 1 FROM ${contracts} WHERE ${and(where, ...choice.clauses)} LIMIT ${few}) AS matches)`);
  }
  const t = contractDateCounts;
  const bounds = counted.window.map((name) => sql`${t.day} ${sql.raw(name.endsWith('From') ? '>=' : '<=')} ${sql.placeholder(name)}::date`);
  return counterPathKeys(shape).map(
    ({ personal, id }) =>
      sql`(SELECT coalesce(sum(${t.n}), 0) FROM ${t} WHERE ${and(sql`${t.scopeId} = ${id}`, sql`${t.personal} = ${sql.raw(String(personal))}`, sql`${t.kind} = ${sql.raw(`'${counted.kind}'`)}`, ...bounds)})`,
  );
}

/**
 * Each access path's rows updated since `updatedSince`, at most: the per-day counters of
 * updated_at (contract_updated_counts) from since's UTC day on, the whole of that day
 * included. One counter row per day, status and auto_renewal of the path.
 */
export function rowsUpdatedSince(shape: AccessShape): SQL[] {
  const t = contractUpdatedCounts;
  const sinceDay = sql`(${sql.placeholder('updatedSince')}::timestamptz AT TIME ZONE 'UTC')::date`;
  return counterPathKeys(shape).map(
    ({ personal, id }) =>
      sql`(SELECT coalesce(sum(${t.n}), 0) FROM ${t} WHERE ${and(sql`${t.scopeId} = ${id}`, sql`${t.personal} = ${sql.raw(String(personal))}`, sql`${t.day} >= ${sinceDay}`)})`,
  );
}

/** Each access path's contracts, from its counters (contract_counts): a dozen rows a path. */
export function rowsInPath(shape: AccessShape): SQL[] {
  const t = contractCounts;
  return counterPathKeys(shape).map(
    ({ personal, id }) => sql`(SELECT coalesce(sum(${t.n}), 0) FROM ${t} WHERE ${and(sql`${t.scopeId} = ${id}`, sql`${t.personal} = ${sql.raw(String(personal))}`)})`,
  );
}
