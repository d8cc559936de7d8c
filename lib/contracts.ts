/**
 * The contracts vocabulary shared by the database, the API and the pages: statuses
 * (docs/api-decisions.md) and the fields the list can be sorted by.
 */

export const CONTRACT_STATUSES = ['pending', 'processing', 'completed', 'failed'] as const;
export type ContractStatus = (typeof CONTRACT_STATUSES)[number];

export const SORT_FIELDS = ['created_at', 'updated_at', 'expiration_date', 'renewal_date', 'contract_value', 'title'] as const;
export type SortField = (typeof SORT_FIELDS)[number];

/** A sort field ascending, or with a leading "-" descending. */
export const SORT_VALUES = SORT_FIELDS.flatMap((f) => [f, `-${f}`] as const);
export type SortValue = (typeof SORT_VALUES)[number];
export const DEFAULT_SORT: SortValue = '-created_at';
