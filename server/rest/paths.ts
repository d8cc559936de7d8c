/** Where the REST API lives, and the paths below it that are not tRPC procedures. */
export const API_PREFIX = '/api/v1';
export const EXPORT_PATH = '/contracts/export';
