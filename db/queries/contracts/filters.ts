import { eq, sql, type SQL } from 'drizzle-orm';
import { showsExtractedData, type ContractStatus } from '@/lib/contracts';
import { contracts } from '../../schema';
import {
  computedNextRenewalDate,
  computedNoticeDeadline,
  containsPattern,
  isCompleted,
  isNotCompleted,
  visibleExpirationDate,
  visibleNextRenewalDate,
  visibleNoticeDeadline,
  type DateWindow,
} from './expressions';

/** What a list, a count or an export keeps, on top of the caller's access. */
export interface ContractFilters {
  status?: ContractStatus;
  /** Must be one of the scope's organisations; the service checks that first. */
  organizationId?: string;
  /** Inclusive bounds (YYYY-MM-DD) on the expiration date the API shows. */
  expirationFrom?: string;
  expirationTo?: string;
  /** Inclusive bounds (YYYY-MM-DD) on the next renewal the API shows (next_renewal_date: an evergreen contract rolled forward). */
  renewalFrom?: string;
  renewalTo?: string;
  /** Inclusive bounds (YYYY-MM-DD) on the notice deadline the API shows. */
  noticeFrom?: string;
  noticeTo?: string;
  autoRenewal?: boolean;
  /** Text searched in the title and the parties, case-insensitively. */
  search?: string;
  /** Updated at or after this instant (ISO 8601 with a time zone, as the client wrote it). */
  updatedSince?: string;
  /** Expires, renews next or has its notice deadline on or after this date (the calendar feed's window; not an API parameter). */
  datesFrom?: string;
  /**
   * The UTC date the renewal decisions are computed on (the windows' "today"): a list that
   * filters or sorts by a rolling date reads the rows the job has not rolled yet as of it
   * (expressions.ts, isStale). Default: the clock's UTC date.
   */
  today?: string;
}

/**
 * The filters other than the organisation (an access path, see ../access.ts), each a
 * clause over one placeholder of its own name. A statement's name lists the filters it
 * has, because its SQL text (and so its prepared plan) depends on which are present,
 * never on their values.
 */
export type FilterName = Exclude<keyof ContractFilters, 'organizationId' | 'today'>;

/** What the list's plan (plan.ts) knows of a filter: it never reads the clause. */
export interface FilterTraits {
  /** On extracted data, which only a completed contract shows (expressions.ts): another status matches nothing. */
  extracted: boolean;
  /** The per-path counters (contract_counts, and each date's and updated_at's) are kept per status and auto_renewal: they can count it. */
  counted: boolean;
  /** One bound of a date window, a range of that date's index of each path. */
  window?: { date: DateWindow; bound: 'from' | 'to' };
  /** updated_since: a range of the (path, updated_at) index of each path. */
  updatedRange: boolean;
  /** A substring search (q): no counter holds it; the capped count and the trigram index do. */
  text: boolean;
  /** On a date that rolls forward: `clause` reads the stored date, true of every row but a stale one (expressions.ts, isStale). */
  rolled: boolean;
}

interface FilterEntry<F extends FilterName> extends FilterTraits {
  clause: SQL;
  /** The same test on a stale row, by the rule (rolled filters; the others test a stale row with `clause`). */
  staleClause?: SQL;
  value: (v: NonNullable<ContractFilters[F]>) => unknown;
}

const plain = { extracted: false, counted: false, updatedRange: false, text: false, rolled: false } as const;
const windowBound = (date: DateWindow, bound: 'from' | 'to') => ({ ...plain, extracted: true, window: { date, bound } });

/** A bound of a rolling date's window: the stored date's clause, and the rule's for a stale row. */
function rollingBound<F extends FilterName>(date: DateWindow, bound: 'from' | 'to', stored: SQL, computed: SQL, name: F): FilterEntry<F> {
  const op = sql.raw(bound === 'from' ? '>=' : '<=');
  const value = sql`${sql.placeholder(name)}::date`;
  return { ...windowBound(date, bound), rolled: true, clause: sql`${stored} ${op} ${value}`, staleClause: sql`${computed} ${op} ${value}`, value: (v) => v };
}

/** Every filter of the list, once: its SQL and what the plan knows of it. Adding one is an entry here (docs/architecture.md, "Adding a filter or a sort"). */
export const FILTERS: { [F in FilterName]: FilterEntry<F> } = {
  status: { ...plain, counted: true, clause: eq(contracts.status, sql.placeholder('status')), value: (v) => v },
  expirationFrom: { ...windowBound('expiration', 'from'), clause: sql`${visibleExpirationDate} >= ${sql.placeholder('expirationFrom')}::date`, value: (v) => v },
  expirationTo: { ...windowBound('expiration', 'to'), clause: sql`${visibleExpirationDate} <= ${sql.placeholder('expirationTo')}::date`, value: (v) => v },
  renewalFrom: rollingBound('renewal', 'from', visibleNextRenewalDate, computedNextRenewalDate, 'renewalFrom'),
  renewalTo: rollingBound('renewal', 'to', visibleNextRenewalDate, computedNextRenewalDate, 'renewalTo'),
  noticeFrom: rollingBound('notice', 'from', visibleNoticeDeadline, computedNoticeDeadline, 'noticeFrom'),
  noticeTo: rollingBound('notice', 'to', visibleNoticeDeadline, computedNoticeDeadline, 'noticeTo'),
  autoRenewal: {
    ...plain,
    extracted: true,
    counted: true,
    clause: sql`(${isCompleted(contracts.status)} AND ${contracts.autoRenewal} = ${sql.placeholder('autoRenewal')}::boolean)`,
    value: (v) => v,
  },
  // The stored search text is lower-cased (db/schema.ts, contracts.search_text) and so is the
  // pattern, by the same lower() in the same collation: exactly what `ILIKE` does to both
  // sides in a UTF-8 database, without lower-casing every row it tests. A line break
  // separates the title and the parties, and a search term has none, so it never spans two.
  search: { ...plain, text: true, clause: sql`${contracts.searchText} LIKE lower(${sql.placeholder('search')}::text)`, value: (v) => containsPattern(v) },
  // The calendar feed's: any of its dates (the expiration, the next renewal, the notice deadline) on or after the day.
  datesFrom: {
    ...plain,
    extracted: true,
    rolled: true,
    clause: sql`(${visibleExpirationDate} >= ${sql.placeholder('datesFrom')}::date OR ${visibleNextRenewalDate} >= ${sql.placeholder('datesFrom')}::date OR ${visibleNoticeDeadline} >= ${sql.placeholder('datesFrom')}::date)`,
    staleClause: sql`(${visibleExpirationDate} >= ${sql.placeholder('datesFrom')}::date OR ${computedNextRenewalDate} >= ${sql.placeholder('datesFrom')}::date OR ${computedNoticeDeadline} >= ${sql.placeholder('datesFrom')}::date)`,
    value: (v) => v,
  },
  updatedSince: { ...plain, updatedRange: true, clause: sql`${contracts.updatedAt} >= ${sql.placeholder('updatedSince')}::timestamptz`, value: (v) => v },
};

export const FILTER_NAMES = Object.keys(FILTERS) as FilterName[];

/** The names of one date window's bounds present in `names`. */
export function windowBounds(names: readonly FilterName[], date: DateWindow): FilterName[] {
  return names.filter((name) => FILTERS[name].window?.date === date);
}

/**
 * Whether no contract can match: a status other than `completed` together with a filter on
 * extracted data. Such a list is answered without reading a row; as a query it walked every
 * contract of the caller to find none (`status=processing&expiring_within_days=90`: 121 ms
 * at 2M contracts). tests/db/matches-nothing.test.ts holds this to the SQL of the clauses.
 */
export function matchesNothing(filters: ContractFilters): boolean {
  return filters.status !== undefined && !showsExtractedData(filters.status) && FILTER_NAMES.some((name) => FILTERS[name].extracted && filters[name] !== undefined);
}

export interface FilterShape {
  /** The filters present, in a fixed order: the part of a statement's name they decide. */
  names: FilterName[];
  /** Each present filter's clause. */
  clauseOf: Partial<Record<FilterName, SQL>>;
  /** Each present filter's clause for a stale row (expressions.ts, isStale). */
  staleClauseOf: Partial<Record<FilterName, SQL>>;
  /** A filter on a rolling date is present: the list reads each path's stale rows too. */
  rolled: boolean;
  /** The filters' values, and `today` (every statement may read it). */
  values: Record<string, unknown>;
  /** q with a status other than completed: the status's clause says so (notCompletedStatus). */
  notCompleted: boolean;
}

/**
 * The status clause of q with a status other than completed: the same rows, and the
 * literal `status <> 'completed'` lets Postgres use the indexes of those contracts that
 * carry their search text (db/schema.ts, contracts_*_not_completed_idx, migration 0017),
 * which it cannot infer from `status = $status`. The word is then tested on index entries:
 * `q=initech&status=processing` read every processing contract of the caller from the
 * heap (408 to 540 ms at 2M).
 */
const notCompletedStatus = sql`(${contracts.status} = ${sql.placeholder('status')} AND ${isNotCompleted(contracts.status)})`;

export function filterShape(filters: ContractFilters): FilterShape {
  const names = FILTER_NAMES.filter((name) => filters[name] !== undefined);
  const values: Record<string, unknown> = { today: filters.today ?? new Date().toISOString().slice(0, 10) };
  for (const name of names) values[name] = (FILTERS[name].value as (v: unknown) => unknown)(filters[name]);
  const notCompleted = filters.search !== undefined && filters.status !== undefined && !showsExtractedData(filters.status);
  const clauseOf: Partial<Record<FilterName, SQL>> = {};
  for (const name of names) {
    if (!notCompleted) clauseOf[name] = FILTERS[name].clause;
    else if (name === 'status') clauseOf[name] = notCompletedStatus;
    else clauseOf[name] = name === 'search' ? offIndex(FILTERS.search.clause) : FILTERS[name].clause;
  }
  const staleClauseOf: Partial<Record<FilterName, SQL>> = {};
  // A stale row is completed: the not-completed forms never apply to it.
  for (const name of names) staleClauseOf[name] = name === 'search' ? offIndex(FILTERS.search.clause) : (FILTERS[name].staleClause ?? FILTERS[name].clause);
  return { names, clauseOf, staleClauseOf, rolled: names.some((name) => FILTERS[name].rolled), values, notCompleted };
}

/** The clauses of a stale row (expressions.ts, isStale), q's off the trigram index (a stale range is small). */
export function staleFilterClauses(shape: FilterShape): SQL[] {
  return shape.names.map((name) => shape.staleClauseOf[name]!);
}

/** The clauses of `names` (default: every filter present), in the shape's order. */
export function filterClauses(shape: FilterShape, names: readonly FilterName[] = shape.names): SQL[] {
  return shape.names.filter((name) => names.includes(name)).map((name) => shape.clauseOf[name]!);
}

/**
 * The clauses with q's kept off the trigram index: `(… LIKE …) IS TRUE` is the same test
 * (the search text is never null), but no index can answer it. For a statement that reads
 * a range of another index anyway (a date window's, updated_since's): Postgres otherwise
 * intersects that range with the trigram index's bitmap of the word, and for a common word
 * that bitmap is every contract that holds it, in every tenant (`initech`: 333,000 entries,
 * 50 ms at 2M, once per access path), where testing the word on the range's few thousand
 * rows takes 1 to 3 ms. Its estimate of the bitmap's cost does not grow with the entries.
 */
export function searchOffIndex(shape: FilterShape): SQL[] {
  // notCompleted: q's clause is off the index already (filterShape).
  return shape.names.map((name) => (name === 'search' && !shape.notCompleted ? offIndex(shape.clauseOf[name]!) : shape.clauseOf[name]!));
}

const offIndex = (clause: SQL) => sql`(${clause}) IS TRUE`;

/** "status,search", "status,search not-completed" or "unfiltered". */
export function filterShapeName(shape: FilterShape): string {
  if (shape.names.length === 0) return 'unfiltered';
  return shape.names.join(',') + (shape.notCompleted ? ' not-completed' : '');
}

/**
 * The specification's own shapes (no filter, or a status filter) are prepared on the
 * server; the renewal filters combine into hundreds of shapes, too many to keep prepared
 * in every pooled connection (see db/client.ts, Statement.prepareOnServer).
 */
export function isCommonFilterShape(shape: FilterShape): boolean {
  return shape.names.length === 0 || (shape.names.length === 1 && shape.names[0] === 'status');
}
