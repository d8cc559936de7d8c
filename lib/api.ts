/** Where the public REST API lives, for the server and the pages that link to it. */
export const API_PREFIX = '/api/v1';
export const OPENAPI_DOCUMENT_PATH = `${API_PREFIX}/openapi.json`;
