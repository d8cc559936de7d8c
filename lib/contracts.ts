/**
 * The contracts vocabulary shared by the database, the API and the pages: statuses
 * (docs/api-decisions.md) and the fields the list can be sorted by.
 */

export const CONTRACT_STATUSES = ['pending', 'processing', 'completed', 'failed'] as const;
export type ContractStatus = (typeof CONTRACT_STATUSES)[number];

/**
 * The one status whose extracted data (dates, auto-renewal, value, parties, summary) the
 * API shows, filters and sorts by (docs/api-decisions.md): before extraction completes the
 * columns are not data. TypeScript asks `showsExtractedData()`; SQL reads it through
 * db/queries/contracts/expressions.ts (`isCompleted`, `isNotCompleted`, the `visible*`
 * keys), whose text the indexes of db/schema.ts and the counters' triggers repeat literally
 * (an expression index serves only the same text: tests/db/keyset-plans.test.ts fails when
 * they part; the counters are held to the rule by tests/access/agreement.test.ts).
 */
export const EXTRACTED_DATA_STATUS = 'completed' satisfies ContractStatus;

export function showsExtractedData(status: ContractStatus): boolean {
  return status === EXTRACTED_DATA_STATUS;
}

export const SORT_FIELDS = ['created_at', 'updated_at', 'expiration_date', 'renewal_date', 'next_renewal_date', 'notice_deadline', 'contract_value', 'title'] as const;
export type SortField = (typeof SORT_FIELDS)[number];

/** A sort field ascending, or with a leading "-" descending. */
export const SORT_VALUES = SORT_FIELDS.flatMap((f) => [f, `-${f}`] as const);
export type SortValue = (typeof SORT_VALUES)[number];
export const DEFAULT_SORT: SortValue = '-created_at';
