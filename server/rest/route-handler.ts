import 'server-only';
import { observed, onKeyRequest } from '@/server/observability/request';
import { recordKeyRequest } from '@/server/usage/recorder';
import { handleApiRequest } from './router';

// Every request an API key authenticated feeds the key's usage and request log.
onKeyRequest(recordKeyRequest);

/**
 * The one route handler of every path and method below /api/v1 (server/rest/router.ts
 * routes them), observed (one log line per request): the router names the route template
 * it matched; unknown paths keep this one.
 *
 * Two route files export it: app/api/v1/[[...path]]/route.ts, for every path, and
 * app/api/v1/contracts/route.ts, for the list alone. The second changes nothing of what is
 * answered (the same handler, methods and router); it makes the busiest path a static
 * route of the App Router, which Next.js serves without working out a dynamic route's
 * pattern and parameters again on every request (its `prepare` rebuilds the route's
 * regular expression and `structuredClone`s the parsed URL for a dynamic page).
 */
export const apiRouteHandler = observed('/api/v1/[[...path]]', handleApiRequest);
