/** Where the REST API lives, and the paths below it that are not tRPC procedures (as the OpenAPI document writes them). */
export { API_PREFIX } from '@/lib/api';
export const DOCUMENT_PATH = '/openapi.json';
export const EXPORT_PATH = '/contracts/export';
export const CALENDAR_FEED_PATH = '/calendar/{token}.ics';
/** The export's operationId (its operation is written by hand in ./openapi-document.ts; ./export.ts names it for its deprecations). */
export const EXPORT_OPERATION_ID = 'exportContracts';
