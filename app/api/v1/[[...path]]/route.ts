import { apiRouteHandler as handler } from '@/server/rest/route-handler';

// Every path and method below /api/v1 reaches the API's router, so that unknown paths and
// methods get the API's JSON 404 and 405 (server/rest/router.ts, server/rest/route-handler.ts).
export const dynamic = 'force-dynamic';
export const GET = handler;
export const HEAD = handler;
export const POST = handler;
export const PUT = handler;
export const PATCH = handler;
export const DELETE = handler;
export const OPTIONS = handler;
