import { showsExtractedData, type ContractStatus } from '@/lib/contracts';
import type { AccessShape } from '../access';
import { SORT_KEYS, type DateWindow, type Sort } from './expressions';
import { FILTERS, windowBounds, type FilterName } from './filters';

/**
 * The list's plan, as a value: how a page of `GET /contracts` and its total are read, from
 * the request (filters, sort, cursor) and the caller's figures (each access path's rows in
 * a range, read in one statement beforehand: figures.ts). A pure function, held by
 * tests/contracts/list-plan.test.ts without a database; page.ts and count.ts build one plain
 * statement per way of reading it names, so `EXPLAIN` shows what runs, and
 * `npm run db:explain` prints `describePlan()` above it.
 *
 * The ways a path is read (one branch per access path, merged in the sort's order):
 * - `walk`: the sort's index of the path, in order, every filter tested on each row, cut to
 *   limit + offset rows. Right unless the filter's rows come late in that order.
 * - `range`: the path's rows updated since `updated_since` (its (path, updated_at) index),
 *   at most FEW_MATCHES, every filter tested, then sorted.
 * - `window`: the path's rows in a date window (that date's covering index, index-only),
 *   at most WINDOW_FEW_MATCHES, sorted by their keys; then the page's rows by id.
 * - `matches`: q with a status other than completed: the path's matches, found by the
 *   figures on its index of those contracts (which holds the search text), fewer than
 *   FEW_MATCHES, read again by id, sorted; then the page's rows by id. The same figures
 *   give the total when they decide it (`figures`), so the word is looked for once.
 *
 * Adding a filter or a sort is an entry in FILTERS (filters.ts) or SORT_KEYS
 * (expressions.ts), whose traits this module reads; see docs/architecture.md.
 */

/** What the plan is asked: a list request, as names (no values, no SQL). */
export interface ListRequest {
  access: AccessShape;
  /** The filters present, as filterShape() names them. */
  filters: readonly FilterName[];
  /** The status filter's value, if any (another status than completed decides two things below). */
  status?: ContractStatus;
  sort: Sort;
  offset: number;
  /** A page after a cursor, and whether the cursor's key is null. */
  cursor?: { nullKey: boolean };
  /** A text search's total is counted up to this many matches (then `total_exact: false`). */
  searchCap?: number;
  /** Only the total is asked (a count, the calendar feed): the page's figures are not read, and every path "walks". */
  totalOnly?: boolean;
}

/**
 * updated_since sorted by another key: a path with few rows in that range (or none) is
 * walked to its end before its branch yields enough rows (sort=title: 80,000 rows in each
 * organisation without a recent update, 120 ms at 2M). With fewer rows in the range than
 * FEW_MATCHES (counted up to that many, index-only, about 0.2 ms), the path reads the range
 * and sorts it; with more, it walks the sort's index, which then finds a page's rows soon
 * unless they are correlated with the order. Any other filter only removes rows from the
 * range, so the choice stands with it. With another filter, at 2M: 58 to 202 ms a page
 * walking every path, 1 to 45 ms choosing (docs/query-plans.md).
 *
 * The same cap serves q with a status other than completed (`matches`), in any order: a
 * word in none of those titles was tested on every row of the walk
 * (`q=initech&status=processing&sort=title`: 410 to 540 ms at 2M).
 */
export const FEW_MATCHES = 1000;

/**
 * A date window sorted by a correlated date (SORT_KEYS' correlatedWindows: an expiration
 * window sorted by renewal date, and the other way round), or with q in any order: a path
 * with fewer rows in the window than this reads the window from its covering index
 * (migration 0012, index-only) and sorts those entries; with more it walks. Each path's
 * rows in the window come from the per-day counters (contract_date_counts), whatever the
 * window's size. At 2M the heavy caller's paths hold about 3,000 rows of a 90-day window,
 * at 10M about 15,000: both read the window (`expiring_within_days=90&sort=-renewal_date`
 * walked: 475 ms at 2M, 1.7 s at 10M; read as a window: 5 to 6 ms at 2M).
 */
export const WINDOW_FEW_MATCHES = 20_000;

/**
 * The capped count of q: a path with fewer rows than this in its range (a window, else
 * updated_since, else the whole path; from its counters) reads that range and tests the word
 * on each row, at about 0.5 µs a row; a path with more walks in list order, where the
 * trigram index finds a rare word. A common word's trigram bitmap covers every tenant
 * (`expiring_within_days=90&q=initech` at 2M: 50 ms a path for the bitmap; the range read
 * 1 to 3 ms); a small path is read whole sooner than the bitmap is built
 * (`q=initech` for a caller who sees 15,000 of 10,000,000: 262 ms with it, 5 ms without).
 */
export const SEARCH_RANGE_ROWS = 20_000;

/** How each path chooses between walking and reading a range: the figure it needs and the cap. */
export type Choice =
  | { kind: 'range'; few: number }
  | { kind: 'window'; date: DateWindow; bounds: FilterName[]; few: number }
  | { kind: 'matches'; few: number };

/** The range a capped count of q reads per path, where the path has few rows in it. */
export type SearchRange = { kind: 'window'; date: DateWindow; bounds: FilterName[] } | { kind: 'updated' } | { kind: 'path' };

/** The figures a plan needs, per access path (in accessPaths() order). */
export interface FigureNeeds {
  /** For the page: each path's rows in the choice's range (capped at `few`, or its counters). */
  choice?: Choice;
  /** For the total: each path's rows in its search range (counters). */
  searchRange?: SearchRange;
  /**
   * For a rolling filter or sort (readsStaleRows): whether any path has a stale row, an
   * index probe a path. Without one (the job ran today: most of every day) no stale branch
   * is planned, half the branches of a union that is planned on every request.
   */
  stale?: true;
}

export interface Figures {
  inRange?: readonly number[];
  searchRange?: readonly number[];
  /** For `matches`: each path's matching ids when fewer than FEW_MATCHES (undefined for a path with more). */
  matchIds?: readonly (readonly string[] | undefined)[];
  /** For `stale`: whether any path has a stale row (unknown: planned as if one had). */
  staleRows?: boolean;
}

export type PathRead = 'walk' | 'range' | 'window' | 'matches';

export type CountSource = 'counters' | 'date-counters' | 'updated-counters' | 'rows' | 'rows-capped';

/** A total the figures already decide (q's matches among contracts not completed, each path's counted up to FEW_MATCHES). */
export interface KnownTotal {
  source: 'figures';
  total: number;
  exact: boolean;
}

export interface ListPlan {
  request: ListRequest;
  needs: FigureNeeds;
  figures: Figures;
  page: {
    /** How each access path is read, in accessPaths() order. */
    reads: PathRead[];
    /** The branches yield ids and sort keys; the page's rows are read by id once merged and cut (a deferred join). */
    deferred: boolean;
    /**
     * A status other than completed, sorted by extracted data: every key is null, and the
     * clause `key IS NULL` (no answer changes) lets each walk start at the null range of the
     * sort's index instead of passing every completed contract first (nulls come last):
     * `organization_id&status=processing&sort=-renewal_date` read a whole organisation (50 ms at 2M).
     */
    nullKeys: boolean;
    /**
     * After a cursor: one range of keys (`after-key`, `after-null-key`), or, after a non-null
     * key of a nullable sort, the later keys first and then, only when they do not fill the
     * page, the null keys (a second statement): as one statement, Merge Append reads a row of
     * every branch before returning any, and a null range that no row of the filter is in
     * was walked to its end on every page (renewing_within_days=90 sorted by
     * expiration_date at 2M: 212 to 316 ms).
     */
    cursor?: 'after-key' | 'after-null-key' | 'after-key-then-nulls';
    /**
     * A filter or the sort on a date that rolls forward (the next renewal, the notice
     * deadline): each path's read tests `isFresh`, and each path has a second branch, its
     * stale rows (expressions.ts) read by the rolling index and tested by the rule.
     */
    stale: boolean;
  };
  total: { source: Exclude<CountSource, 'rows-capped'> } | { source: 'rows-capped'; cap: number; range: SearchRange; reads: ('walk' | 'range')[] } | KnownTotal;
}

const has = (request: ListRequest, trait: 'updatedRange' | 'text' | 'counted') => request.filters.some((name) => FILTERS[name][trait]);
const DATES: DateWindow[] = ['expiration', 'renewal', 'notice'];

/** A filter or the sort on a rolling date, with a status that shows extracted data (a stale row is completed). */
export function readsStaleRows(request: ListRequest): boolean {
  const rolls = request.filters.some((name) => FILTERS[name].rolled) || SORT_KEYS[request.sort.field].rolled !== undefined;
  return rolls && (request.status === undefined || showsExtractedData(request.status));
}

/** A window present in the request, of the first of `dates` that has one. */
function firstWindow(request: ListRequest, dates: readonly DateWindow[]): { date: DateWindow; bounds: FilterName[] } | undefined {
  for (const date of dates) {
    const bounds = windowBounds(request.filters, date);
    if (bounds.length > 0) return { date, bounds };
  }
  return undefined;
}

export function notCompletedSearch(request: ListRequest): boolean {
  return has(request, 'text') && request.status !== undefined && !showsExtractedData(request.status);
}

/**
 * Which range each path chooses to read instead of walking, if any. A window of a
 * correlated date comes first, even with updated_since: its range is bounded by
 * WINDOW_FEW_MATCHES, while updated_since's choice walks a path with 1,000 rows or more in
 * its range, and that walk meets the window's rows last (45 ms a page at 2M). With q, a
 * window in any order: the word's rows are spread through every order, the window's are few.
 */
export function choiceOf(request: ListRequest): Choice | undefined {
  const { sort } = request;
  const correlated = firstWindow(request, SORT_KEYS[sort.field].correlatedWindows);
  const updated = has(request, 'updatedRange');
  if (!correlated && updated && sort.field !== 'updated_at') return { kind: 'range', few: FEW_MATCHES };
  const window = correlated ?? (has(request, 'text') ? firstWindow(request, [...SORT_KEYS[sort.field].correlatedWindows, ...DATES]) : undefined);
  if (window) return { kind: 'window', ...window, few: WINDOW_FEW_MATCHES };
  // In any order, created_at's too (that index's own, which a walk reads index-only): with
  // the matches' ids in the figures, the page reads a few rows by id and the total needs no
  // count (`q=initech&status=processing` at 2M: 55 ms walking and counting, 27 ms so).
  if (notCompletedSearch(request) && !updated) return { kind: 'matches', few: FEW_MATCHES };
  return undefined;
}

/** Which counters answer the total exactly, if any. */
export function countSource(request: ListRequest): CountSource {
  const names = request.filters;
  const counted = (name: FilterName) => FILTERS[name].counted;
  if (names.every(counted)) return 'counters';
  for (const date of DATES) {
    const inWindow = (name: FilterName) => FILTERS[name].window?.date === date;
    if (names.some(inWindow) && names.every((name) => inWindow(name) || counted(name))) return 'date-counters';
  }
  if (has(request, 'updatedRange') && names.every((name) => FILTERS[name].updatedRange || counted(name))) return 'updated-counters';
  return has(request, 'text') && request.searchCap !== undefined ? 'rows-capped' : 'rows';
}

/** The range a capped count of q may read per path: updated_since's, else a window's, else the path. */
function searchRangeOf(request: ListRequest): SearchRange {
  if (has(request, 'updatedRange')) return { kind: 'updated' };
  const window = firstWindow(request, DATES);
  return window ? { kind: 'window', ...window } : { kind: 'path' };
}

/** The figures a request's plan needs (none for most requests: then no statement reads them). */
export function figuresNeeded(request: ListRequest): FigureNeeds {
  const choice = request.totalOnly ? undefined : choiceOf(request);
  return {
    ...(choice ? { choice } : {}),
    ...(countSource(request) === 'rows-capped' ? { searchRange: searchRangeOf(request) } : {}),
    ...(readsStaleRows(request) ? { stale: true as const } : {}),
  };
}

export function pathCount(access: AccessShape): number {
  return (access.personal ? 1 : 0) + access.organizationIds.length;
}

function perPath(figures: readonly number[] | undefined, paths: number, what: string): readonly number[] {
  if (!figures || figures.length !== paths) throw new Error(`list plan: ${what} needs one figure per access path (${paths})`);
  return figures;
}

/**
 * The capped total from each path's matches counted up to `few` (the same rows the capped
 * count would find: the path's rows under every filter), when they decide it: more than
 * the cap in all, or every path under `few` (then the sum is exact). Undefined when a path
 * reached `few` and the sum is within the cap (only if the cap is `few` or more).
 */
function totalOfMatches(matches: readonly number[], few: number, cap: number): KnownTotal | undefined {
  const sum = matches.reduce((a, b) => a + b, 0);
  if (sum > cap) return { source: 'figures', total: cap, exact: false };
  return matches.every((n) => n < few) ? { source: 'figures', total: sum, exact: true } : undefined;
}

/** The plan of a request, given the figures figuresNeeded() asked for. */
export function planList(request: ListRequest, figures: Figures = {}): ListPlan {
  const needs = figuresNeeded(request);
  const paths = pathCount(request.access);
  const { choice, searchRange } = needs;
  const inRange = choice ? perPath(figures.inRange, paths, 'the choice') : undefined;
  const reads: PathRead[] = Array.from({ length: paths }, (_, i) => (choice && inRange![i]! < choice.few ? choice.kind : 'walk'));
  const { sort } = request;
  const key = SORT_KEYS[sort.field];
  const otherStatus = request.status !== undefined && !showsExtractedData(request.status);
  const cursor = request.cursor
    ? request.cursor.nullKey
      ? 'after-null-key'
      : key.nullable
        ? 'after-key-then-nulls'
        : 'after-key'
    : undefined;
  const source = countSource(request);
  const known = choice?.kind === 'matches' && source === 'rows-capped' ? totalOfMatches(inRange!, choice.few, request.searchCap!) : undefined;
  const total: ListPlan['total'] = known
    ? known
    : source === 'rows-capped'
      ? {
          source,
          cap: request.searchCap!,
          range: searchRange!,
          reads: perPath(figures.searchRange, paths, 'the capped count').map((n) => (n < SEARCH_RANGE_ROWS ? 'range' : 'walk')),
        }
      : { source };
  return {
    request,
    needs,
    figures,
    page: {
      reads,
      deferred: choice !== undefined && choice.kind !== 'range',
      nullKeys: otherStatus && key.extracted,
      ...(cursor ? { cursor } : {}),
      stale: readsStaleRows(request) && figures.staleRows !== false,
    },
    total,
  };
}

const READS: Record<PathRead, (plan: ListPlan) => string> = {
  walk: (plan) => `walks its ${sortName(plan.request.sort)} index${plan.page.nullKeys ? ' from the null keys' : ''}`,
  range: () => `reads its rows updated since updated_since (fewer than ${FEW_MATCHES.toLocaleString('en')}) and sorts them`,
  window: (plan) => {
    const choice = plan.needs.choice as Extract<Choice, { kind: 'window' }>;
    return `reads its ${choice.date} window index-only (fewer than ${choice.few.toLocaleString('en')} rows), sorts the keys, then the page's rows by id`;
  },
  matches: () => `reads its matches (fewer than ${FEW_MATCHES.toLocaleString('en')}, found by the figures) by id, sorts them, then the page's rows by id`,
};

const sortName = (sort: Sort) => `${sort.descending ? '-' : ''}${sort.field}`;

const FIGURE_WORDS: Record<Choice['kind'], string> = {
  range: `rows updated since updated_since, counted up to ${FEW_MATCHES.toLocaleString('en')}`,
  window: 'rows in the window, from the per-day counters',
  matches: `matches of q, counted up to ${FEW_MATCHES.toLocaleString('en')} on its index of contracts not completed (with their ids when fewer)`,
};

const TOTAL_WORDS: Record<CountSource | 'figures', string> = {
  figures: 'decided by the figures (each path\'s matches counted up to 1,000): no statement',
  counters: 'the sums of the paths\' counters (contract_counts)',
  'date-counters': 'the sums of the paths\' per-day counters of the window\'s date (contract_date_counts)',
  'updated-counters': 'since\'s day counted by index, every later day from the per-day counters of updated_at (contract_updated_counts)',
  rows: 'the matching rows counted, personal path and all organisations at once',
  'rows-capped': 'the matches counted up to the cap (total_exact: false beyond)',
};

/** The plan in words, one line per decision (npm run db:explain prints it above the statements). */
export function describePlan(plan: ListPlan, pathNames: readonly string[]): string[] {
  const { request, page, total, needs, figures } = plan;
  const lines = [
    `filters: ${request.filters.length > 0 ? request.filters.join(', ') : 'none'}; sort: ${sortName(request.sort)}${request.offset > 0 ? `; offset ${request.offset}` : ''}`,
  ];
  if (needs.choice) lines.push(`figures: each path's ${FIGURE_WORDS[needs.choice.kind]}: ${figures.inRange!.join(', ')}`);
  page.reads.forEach((read, i) => lines.push(`page, path ${pathNames[i] ?? i + 1}: ${READS[read](plan)}`));
  if (page.deferred && !page.reads.some((r) => r === 'window' || r === 'matches')) lines.push('page: the branches yield ids and sort keys; the page\'s rows are read by id');
  if (page.stale) lines.push('page, every path: also its evergreen contracts not rolled forward yet (the rolling index, dates by the rule), merged in order');
  if (page.cursor === 'after-key-then-nulls') lines.push('after the cursor: the later keys; the null keys only if those do not fill the page (a second statement)');
  else if (page.cursor) lines.push(`after the cursor: one range (${page.cursor})`);
  lines.push(`total: ${TOTAL_WORDS[total.source]}${total.source === 'figures' ? `: ${total.total}${total.exact ? '' : ' or more'}` : ''}`);
  if (total.source === 'rows-capped') {
    lines.push(`total figures: each path's rows in its ${total.range.kind === 'path' ? 'path' : total.range.kind === 'updated' ? 'updated_since range' : `${total.range.kind} window`}: ${figures.searchRange!.join(', ')}`);
    total.reads.forEach((read, i) =>
      lines.push(`total, path ${pathNames[i] ?? i + 1}: ${read === 'range' ? `reads that range (under ${SEARCH_RANGE_ROWS.toLocaleString('en')} rows), word tested on each row` : 'walks in list order (the trigram index may find a rare word)'}`),
    );
  }
  return lines;
}
