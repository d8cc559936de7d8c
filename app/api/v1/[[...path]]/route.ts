import { observed } from '@/server/observability/request';
import { handleApiRequest } from '@/server/rest/router';

// Every path and method below /api/v1 reaches the API's router, so that unknown paths and
// methods get the API's JSON 404 and 405 (server/rest/router.ts). Observed (one log line
// per request): the router names the route template it matched; unknown paths keep this one.
const handler = observed('/api/v1/[[...path]]', handleApiRequest);
export const dynamic = 'force-dynamic';
export const GET = handler;
export const HEAD = handler;
export const POST = handler;
export const PUT = handler;
export const PATCH = handler;
export const DELETE = handler;
export const OPTIONS = handler;
