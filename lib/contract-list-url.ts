/**
 * The contracts list's URL state: the API's query parameters the page takes, and links
 * that keep them. Free of server code, so that the filter form (a client component) can
 * import it.
 */

export const LIST_PARAMS = [
  'q',
  'status',
  'organization_id',
  'expiring_within_days',
  'renewing_within_days',
  'notice_within_days',
  'expires_after',
  'expires_before',
  'renews_after',
  'renews_before',
  'notice_after',
  'notice_before',
  'auto_renewal',
  'updated_since',
  'sort',
  'limit',
  'offset',
] as const;
export type ListParam = (typeof LIST_PARAMS)[number];

/** The filters among the parameters (what "Reset filters" clears and the empty state lists). */
export const FILTER_PARAMS = LIST_PARAMS.filter((p) => p !== 'sort' && p !== 'limit' && p !== 'offset');

export const PAGE_SIZES = [10, 25, 50, 100] as const;
export const DEFAULT_PAGE_SIZE = 25;

export type SearchParams = Record<string, string | string[] | undefined>;
export type ParamValues = Partial<Record<ListParam, string>>;

export interface ParamError {
  param: string;
  message: string;
}

/** /contracts with the given parameters, in a stable order, empty ones left out. */
export function listHref(params: ParamValues): string {
  const query = new URLSearchParams();
  for (const name of LIST_PARAMS) {
    const value = params[name];
    if (value !== undefined && value !== '') query.set(name, value);
  }
  const text = query.toString();
  return text ? `/contracts?${text}` : '/contracts';
}

/** Where the page's "Download CSV" points: the export of every contract of the list, with its filters and sort. */
export const EXPORT_PATH = '/contracts/export';

/** The CSV download of the list: its filters and sort; not its page (every matching contract is in the file). */
export function exportHref(params: ParamValues): string {
  const query = new URLSearchParams();
  for (const name of LIST_PARAMS) {
    const value = params[name];
    if (value !== undefined && value !== '' && !PAGING_PARAMS.includes(name)) query.set(name, value);
  }
  const text = query.toString();
  return text ? `${EXPORT_PATH}?${text}` : EXPORT_PATH;
}

/** The parameters that choose a page of the list, not which contracts are in it. */
export const PAGING_PARAMS: readonly ListParam[] = ['limit', 'offset'];

/** The same list without some parameters; any change of filters starts again at the first page. */
export function without(params: ParamValues, ...names: ListParam[]): ParamValues {
  const rest = { ...params };
  for (const name of [...names, 'offset' as const]) delete rest[name];
  return rest;
}

/** The URL of a request to the list, every parameter kept as given (to come back to it after signing in). */
export function requestHref(params: SearchParams): string {
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) {
    for (const v of Array.isArray(value) ? value : value === undefined ? [] : [value]) query.append(name, v);
  }
  const text = query.toString();
  return text ? `/contracts?${text}` : '/contracts';
}
