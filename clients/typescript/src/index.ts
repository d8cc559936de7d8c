import createClient, { type Client } from 'openapi-fetch';
import type { components, paths } from './generated/openapi.js';
import { retryOnRateLimit, type FetchFunction, type RetryOptions } from './retry.js';
import { revalidateWithETags, type RevalidationOptions } from './revalidate.js';

/**
 * The official TypeScript client of the Contract Data API: openapi-fetch over the types
 * openapi-typescript generates from the API's OpenAPI document (src/generated/openapi.ts).
 * Every path, parameter, body and response is typed from the document.
 */

export type { components, operations, paths } from './generated/openapi.js';
export { retryAfterSeconds, retryOnRateLimit, type FetchFunction, type RetryInfo, type RetryOptions } from './retry.js';
export { revalidateWithETags, type RevalidationOptions } from './revalidate.js';
export { ContractDataApiError } from './errors.js';
export { sync, type SyncOptions, type SyncResult, type SyncStore } from './sync.js';

type Schemas = components['schemas'];
/** The list's answer (GET /contracts): `{ success: true, data: { contracts, pagination } }`. */
export type ContractList = Schemas['ContractList'];
/** The get-one answer (GET /contracts/{id}): `{ success: true, data: { contract } }`. */
export type ContractResponse = Schemas['ContractResponse'];
export type ContractSummary = Schemas['ContractSummary'];
export type ContractDetail = Schemas['ContractDetail'];
export type ExtractedData = Schemas['ExtractedData'];
export type Pagination = Schemas['Pagination'];
export type ExportRequest = Schemas['ExportRequest'];
/** The body of every error answer: `{ success: false, error: { code, message, details }, request_id }`. */
export type ErrorBody = Schemas['Error'];
/** The same envelope as ErrorBody (the document's `Error` schema); ContractDataApiError is the exception that carries it. */
export type ApiError = ErrorBody;
/** The stable error codes to branch on. */
export type ErrorCode = Schemas['ErrorCode'];
/** The list's query parameters (filters, sort, limit, offset). */
export type ListContractsQuery = NonNullable<paths['/contracts']['get']['parameters']['query']>;
/** The event list (GET /events): a page, one event, and the query. */
export type EventList = Schemas['EventList'];
export type Event = Schemas['Event'];
export type ListEventsQuery = NonNullable<paths['/events']['get']['parameters']['query']>;
export type ContractStatus = ContractSummary['status'];

export type ContractDataClient = Client<paths>;

export interface ContractDataClientOptions {
  /** The API's base URL, ending in /api/v1 (for example https://contracts.example.com/api/v1). */
  baseUrl: string;
  /** An API key (`cdapi_…`) from Settings → API Keys. The calendar feed and the document need none. */
  apiKey?: string | undefined;
  /**
   * How the key is sent: `X-API-Key` (default) or `Authorization: Bearer` (for a proxy or
   * a tool that passes only the standard header). The API treats both alike.
   */
  auth?: 'x-api-key' | 'bearer' | undefined;
  /**
   * Conditional GETs (default off): remember each GET's answer and ETag, send
   * `If-None-Match`, and hand a 304 back as the remembered answer. A 304 does not count
   * against the key's rate limit, so polling costs only what changed. `true` remembers 500
   * answers; pass options to change that.
   */
  revalidate?: boolean | RevalidationOptions | undefined;
  /**
   * Waiting out 429 and 503 answers that carry `Retry-After` (on by default: 3 retries,
   * waits of at most 60 s). `false` returns them to the caller at once.
   */
  retry?: RetryOptions | false | undefined;
  /** The fetch to send requests with (default: the global fetch). */
  fetch?: FetchFunction | undefined;
}

/** A client for one API key. Call it with the document's paths: `client.GET('/contracts', …)`. */
export function createContractDataClient(options: ContractDataClientOptions): ContractDataClient {
  const baseFetch: FetchFunction = options.fetch ?? ((request) => globalThis.fetch(request));
  const retrying = options.retry === false ? baseFetch : retryOnRateLimit(baseFetch, options.retry);
  // Revalidation outside the retries: a remembered answer is handed back once, whatever it took to learn it is current.
  const revalidating = options.revalidate ? revalidateWithETags(retrying, options.revalidate === true ? {} : options.revalidate) : retrying;
  const keyHeader = options.auth === 'bearer' ? { Authorization: `Bearer ${options.apiKey}` } : { 'X-API-Key': options.apiKey };
  return createClient<paths>({
    baseUrl: options.baseUrl.replace(/\/+$/, ''),
    fetch: revalidating,
    ...(options.apiKey ? { headers: keyHeader } : {}),
  });
}
