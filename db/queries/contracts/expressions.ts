import { sql, type SQL } from 'drizzle-orm';
import type { PgColumn } from 'drizzle-orm/pg-core';
import { EXTRACTED_DATA_STATUS, type SortField } from '@/lib/contracts';
import { contracts } from '../../schema';

/**
 * SQL expressions over contracts that filters, sorts and indexes share. Extracted data
 * is shown by the API only once a contract is completed, so filters and sorts read it
 * through the same rule: a pending contract's raw dates never match a date filter nor
 * decide an order.
 *
 * The expiration and renewal expressions are written exactly as in the indexes of
 * db/schema.ts (contracts_*_expiration_idx, contracts_*_renewal_idx): Postgres uses an
 * expression index only for the same expression, so the literal 'completed' is part of
 * the SQL text, never a parameter. The search text is a stored column (contracts.search_text).
 */
/** The status column (of contracts, or of a counter table) shows extracted data: the literal status, never a parameter. */
export const isCompleted = (status: SQL | PgColumn) => sql`${status} = ${sql.raw(`'${EXTRACTED_DATA_STATUS}'`)}`;

/** Its negation as the partial indexes of contracts not completed are written (`<>`: Postgres proves the index's predicate from the same operator). */
export const isNotCompleted = (status: SQL | PgColumn) => sql`${status} <> ${sql.raw(`'${EXTRACTED_DATA_STATUS}'`)}`;

const whenCompleted = (column: SQL | typeof contracts.expirationDate) => sql`(CASE WHEN ${isCompleted(contracts.status)} THEN ${column} END)`;

export const visibleExpirationDate = whenCompleted(sql`${contracts.expirationDate}`);
export const visibleRenewalDate = whenCompleted(sql`${contracts.renewalDate}`);

/**
 * The renewal decision (lib/renewal-dates.ts) moves with the day: the stored
 * next_renewal_date and notice_deadline (migration 0019) are right as of the day the row
 * was written or the scheduled job last rolled it (server/contracts/rolling.ts), and stay
 * right until that next renewal passes. A completed evergreen contract (auto-renewing,
 * with a term) whose stored next renewal is before today is *stale*: the list reads it in a
 * branch of its own, through the rule in SQL (contract_next_renewal, contract_notice_deadline),
 * so that no answer depends on when the job last ran. Stale rows are few (a day's
 * renewals when the job runs) and found by the rolling indexes (db/schema.ts), whose
 * predicate is this one's. "Today" is the statement's `today` (UTC), as for the windows.
 */
export const today = sql`${sql.placeholder('today')}::date`;
export const staleOn = (day: SQL) => sql`(${isCompleted(contracts.status)} AND ${contracts.autoRenewal} AND ${contracts.renewalTerm} IS NOT NULL AND ${contracts.nextRenewalDate} < ${day})`;
export const isStale = staleOn(today);
/** Every row but a stale one (a null comparison is not stale: no renewal date, nothing to roll). */
export const isFresh = sql`NOT coalesce(${isStale}, false)`;

export const visibleNextRenewalDate = whenCompleted(sql`${contracts.nextRenewalDate}`);
export const visibleNoticeDeadline = whenCompleted(sql`${contracts.noticeDeadline}`);
/** A stale row's dates by the rule, as of today (only ever read for a stale, so completed, row). */
export const computedNextRenewalDate = sql`contract_next_renewal(${contracts.renewalDate}, ${contracts.autoRenewal}, ${contracts.renewalTerm}, ${today})`;
export const computedNoticeDeadline = sql`contract_notice_deadline(${computedNextRenewalDate}, ${contracts.autoRenewal}, ${contracts.noticePeriod})`;
export const visibleContractValue = whenCompleted(sql`${contracts.contractValue}`);

/** A LIKE pattern that matches `text` literally anywhere: %, _ and \ are escaped. */
export function containsPattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

export interface SortKey {
  /** The value the rows are ordered by (then by id). */
  expression: SQL;
  /** Whether the value can be null; nulls come last in both directions. */
  nullable: boolean;
  /** The SQL type a cursor's text value is cast back to. */
  type: 'timestamptz' | 'date' | 'numeric' | 'text';
  /** Extracted data: null for any status but completed (so a filter to another status reads only the null range). */
  extracted: boolean;
  /**
   * The date windows whose rows sit together, far apart, in this order (a renewal date is
   * an expiration date minus a notice period): a walk in this order meets a window of those
   * dates late, so the list plan reads such a window as a range instead (plan.ts).
   */
  correlatedWindows: readonly DateWindow[];
  /** A date that rolls forward: a stale row's value by the rule (isStale), where `expression` is the stored one. */
  rolled?: SQL;
}

/** The dates a list can filter by a window (from, to), as filters.ts names their bounds: 'renewal' is the next renewal. */
export type DateWindow = 'expiration' | 'renewal' | 'notice';

export const SORT_KEYS: Record<SortField, SortKey> = {
  created_at: { expression: sql`${contracts.createdAt}`, nullable: false, type: 'timestamptz', extracted: false, correlatedWindows: [] },
  updated_at: { expression: sql`${contracts.updatedAt}`, nullable: false, type: 'timestamptz', extracted: false, correlatedWindows: [] },
  expiration_date: { expression: visibleExpirationDate, nullable: true, type: 'date', extracted: true, correlatedWindows: ['renewal', 'notice'] },
  // The extracted renewal date: an evergreen contract's next renewal (the 'renewal' window)
  // can lie years after it, so that window's rows are spread through this order too.
  renewal_date: { expression: visibleRenewalDate, nullable: true, type: 'date', extracted: true, correlatedWindows: ['expiration', 'renewal', 'notice'] },
  next_renewal_date: {
    expression: visibleNextRenewalDate,
    rolled: computedNextRenewalDate,
    nullable: true,
    type: 'date',
    extracted: true,
    correlatedWindows: ['expiration', 'notice'],
  },
  notice_deadline: { expression: visibleNoticeDeadline, rolled: computedNoticeDeadline, nullable: true, type: 'date', extracted: true, correlatedWindows: ['expiration', 'renewal'] },
  contract_value: { expression: visibleContractValue, nullable: true, type: 'numeric', extracted: true, correlatedWindows: [] },
  // Case-insensitive, in the database's collation.
  title: { expression: sql`lower(${contracts.title})`, nullable: false, type: 'text', extracted: false, correlatedWindows: [] },
};

export interface Sort {
  field: SortField;
  descending: boolean;
}

export const DEFAULT_ORDER: Sort = { field: 'created_at', descending: true };

/**
 * `test` of a rolling date's value, as one clause that indexes can serve: the stored date
 * (its index) for a fresh row, the rule's for a stale one (the rolling index). For the
 * statements that read all paths at once (webhooks, the chart); the list splits the two
 * into branches of their own (page.ts, count.ts).
 */
export function onRollingDate(field: 'next_renewal_date' | 'notice_deadline', test: (date: SQL) => SQL): SQL {
  const key = SORT_KEYS[field];
  return sql`((${test(key.expression)} AND ${isFresh}) OR (${isStale} AND ${test(key.rolled!)}))`;
}

/** The sort's key of any row: the stored value, or a stale row's by the rule (a rolled date). */
export function exactKey(field: SortField): SQL {
  const key = SORT_KEYS[field];
  return key.rolled ? sql`(CASE WHEN ${isStale} THEN ${key.rolled} ELSE ${key.expression} END)` : key.expression;
}

/**
 * ORDER BY terms for a sort, over `key` (the expression in a branch, or the output
 * column's name in the union above the branches). Non-null keys keep Postgres's default
 * null placement, which is what their indexes are built with; nullable keys put nulls
 * last explicitly.
 */
export function orderTerms(sort: Sort, key: SQL, id: SQL): SQL[] {
  const direction = sql.raw(sort.descending ? 'DESC' : 'ASC');
  const nulls = SORT_KEYS[sort.field].nullable ? sql.raw(' NULLS LAST') : sql``;
  return [sql`${key} ${direction}${nulls}`, sql`${id} ${direction}`];
}
