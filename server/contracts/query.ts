import type { Sort } from '@/db/queries/contracts/expressions';
import type { ContractFilters } from '@/db/queries/contracts/filters';
import type { SortField, SortValue } from '@/lib/contracts';
import { addDays, utcToday } from '@/server/dates';

/**
 * The API's filter parameters (the list's query and the export's body share them) as
 * the query layer's filters: relative windows and exclusive dates become inclusive date
 * bounds, so that every combination is one range per date.
 */
export interface FilterParams {
  status?: ContractFilters['status'];
  organization_id?: string;
  expiring_within_days?: number;
  renewing_within_days?: number;
  expires_before?: string;
  expires_after?: string;
  renews_before?: string;
  renews_after?: string;
  notice_within_days?: number;
  notice_before?: string;
  notice_after?: string;
  auto_renewal?: boolean;
  q?: string;
  updated_since?: string;
}

// ISO dates compare correctly as text, and so do the infinities ('-' sorts before digits, 'i' after).
const later = (a: string | undefined, b: string | undefined) => (a === undefined ? b : b === undefined || a > b ? a : b);
const earlier = (a: string | undefined, b: string | undefined) => (a === undefined ? b : b === undefined || a < b ? a : b);

/** Inclusive bounds from a relative window and exclusive before/after dates. */
function dateRange(today: string, withinDays: number | undefined, before: string | undefined, after: string | undefined) {
  const from = later(withinDays === undefined ? undefined : today, after === undefined ? undefined : addDays(after, 1));
  const to = earlier(withinDays === undefined ? undefined : addDays(today, withinDays), before === undefined ? undefined : addDays(before, -1));
  return { from, to };
}

export function toContractFilters(params: FilterParams, today: string = utcToday()): ContractFilters {
  const expiration = dateRange(today, params.expiring_within_days, params.expires_before, params.expires_after);
  const renewal = dateRange(today, params.renewing_within_days, params.renews_before, params.renews_after);
  const notice = dateRange(today, params.notice_within_days, params.notice_before, params.notice_after);
  const filters: ContractFilters = {
    status: params.status,
    organizationId: params.organization_id,
    expirationFrom: expiration.from,
    expirationTo: expiration.to,
    renewalFrom: renewal.from,
    renewalTo: renewal.to,
    noticeFrom: notice.from,
    noticeTo: notice.to,
    autoRenewal: params.auto_renewal,
    search: params.q,
    updatedSince: params.updated_since,
    // The renewal decisions are computed on the same day as the windows.
    today,
  };
  // Absent filters are left out, so that the statement's shape names only the present ones.
  return Object.fromEntries(Object.entries(filters).filter(([, v]) => v !== undefined)) as ContractFilters;
}

/** "-renewal_date" → renewal_date, descending. */
export function toSort(value: SortValue | undefined): Sort | undefined {
  if (value === undefined) return undefined;
  const descending = value.startsWith('-');
  return { field: (descending ? value.slice(1) : value) as SortField, descending };
}
