import { apiRouteHandler as handler } from '@/server/rest/route-handler';

// GET /api/v1/contracts, the busiest path, as a static route: the same handler and
// methods as app/api/v1/[[...path]]/route.ts, without Next.js's per-request work for a
// dynamic route (server/rest/route-handler.ts says what that costs).
export const dynamic = 'force-dynamic';
export const GET = handler;
export const HEAD = handler;
export const POST = handler;
export const PUT = handler;
export const PATCH = handler;
export const DELETE = handler;
export const OPTIONS = handler;
