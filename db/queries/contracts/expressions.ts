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
}

/** The date columns a list can filter by a window (from, to), as filters.ts names their bounds. */
export type DateWindow = 'expiration' | 'renewal';

export const SORT_KEYS: Record<SortField, SortKey> = {
  created_at: { expression: sql`${contracts.createdAt}`, nullable: false, type: 'timestamptz', extracted: false, correlatedWindows: [] },
  updated_at: { expression: sql`${contracts.updatedAt}`, nullable: false, type: 'timestamptz', extracted: false, correlatedWindows: [] },
  expiration_date: { expression: visibleExpirationDate, nullable: true, type: 'date', extracted: true, correlatedWindows: ['renewal'] },
  renewal_date: { expression: visibleRenewalDate, nullable: true, type: 'date', extracted: true, correlatedWindows: ['expiration'] },
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
