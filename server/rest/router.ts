import 'server-only';
import { getDb, getReadDb } from '@/server/database';
import { AppError, toAppError } from '@/server/errors';
import { requestContext, type RequestContext } from '@/server/http/context';
import { withinDeadline } from '@/server/http/deadline';
import { rejectQueryParameters } from '@/server/http/query';
import { recordHttpRequest } from '@/server/observability/metrics';
import { apiHeaders, errorResponse, methodNotAllowed, newRequestId } from '@/server/http/responses';
import { setRequestRoute as setTraceRoute, traceApiRequest } from '@/server/observability/tracing';
import { setRequestRoute } from '@/server/observability/request';
import { feedNotFound, isFeedFile, serveCalendarFeed } from './calendar-feed';
import { addDeprecationHeaders, linkOrigin, usedDeprecations } from './deprecation-headers';
import { serveDocument } from './document';
import { serveExport } from './export';
import { jsonOperation } from './json-operations';
import { buildOpenApiDocument } from './openapi-document';
import { API_PREFIX, CALENDAR_FEED_PATH, DOCUMENT_PATH, EXPORT_PATH } from '@/server/http/api-paths';

/**
 * Every request below /api/v1 comes through here (app/api/v1/[[...path]]/route.ts): the
 * route table, then 404 and 405 answers in the API's envelope, HEAD for every GET, a
 * request id shared by the response and the log, and the request deadline around the
 * handler, and the deprecation headers of what a request used (./deprecation-headers.ts).
 * The table is read from the OpenAPI document (which describes itself too), so that what
 * is served cannot drift from what is documented.
 */

/** A handler gets the request context lazily: the document needs no database. */
type Serve = (req: Request, responseHeaders: Headers, context: () => Promise<RequestContext>) => Promise<Response>;

const withContext =
  (serve: (req: Request, ctx: RequestContext, responseHeaders: Headers) => Promise<Response>): Serve =>
  async (req, responseHeaders, context) =>
    serve(req, await context(), responseHeaders);

interface Route {
  /** The path as the document writes it. */
  path: string;
  /** The path below the API's prefix, as the metrics label requests (built once, not per request). */
  template: string;
  pattern: RegExp;
  /** The methods served, HEAD included for GET. */
  methods: string[];
  /** The operationId of each documented method (HEAD is served as its GET). */
  operationIds: Record<string, string>;
  serve: Serve;
  /** The answer to another method, when it is not the generic 405. */
  wrongMethod?: (req: Request, requestId: string, headers: Headers) => Response | undefined;
}

/** A document path as a pattern: literal characters escaped, each {parameter} one segment. */
function patternOf(path: string): RegExp {
  return new RegExp(`^${path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+')}/?$`);
}

const withHead = (methods: string[]) => [...new Set([...methods, ...(methods.includes('GET') ? ['HEAD'] : [])])];

function serverOf(path: string, operationIds: Record<string, string>): Pick<Route, 'serve' | 'pattern' | 'wrongMethod'> {
  if (path === DOCUMENT_PATH) {
    const serve: Serve = (req, headers) => {
      rejectQueryParameters(req.url, []);
      return serveDocument(req, headers);
    };
    return { serve, pattern: patternOf(path) };
  }
  if (path === EXPORT_PATH) return { serve: withContext(serveExport), pattern: patternOf(path) };
  if (path === CALENDAR_FEED_PATH) {
    return {
      serve: withContext(serveCalendarFeed),
      // Every file name below /calendar/ is the feed's business: a name without .ics gets the
      // same 404 as a bad token, so the answer says nothing about which tokens exist; other
      // methods on one are a 404 too (nothing is looked up for them).
      pattern: /^\/calendar\/[^/]+$/,
      wrongMethod: (req, requestId, headers) => (isFeedFile(req.url) ? undefined : errorResponse(feedNotFound(), requestId, headers)),
    };
  }
  return { serve: withContext(jsonOperation(path, operationIds.GET!)), pattern: patternOf(path) };
}

function buildRoutes(): Route[] {
  const paths = buildOpenApiDocument('').paths as Record<string, Record<string, unknown>>;
  const documented: Route[] = Object.entries(paths).map(([path, item]) => {
    const operationIds = Object.fromEntries(Object.entries(item).map(([m, operation]) => [m.toUpperCase(), String((operation as { operationId?: string }).operationId)]));
    return { path, template: `${API_PREFIX}${path}`, methods: withHead(Object.keys(item).map((m) => m.toUpperCase())), operationIds, ...serverOf(path, operationIds) };
  });
  // A path without parameters wins over a pattern, as in the App Router ("/contracts/export" over "/contracts/{id}").
  return documented.sort((a, b) => Number(a.path.includes('{')) - Number(b.path.includes('{')));
}

let routes: Route[] | undefined;

/** The route table (exported for tests/server/deadline.test.ts, which holds every route to the deadline). */
export function apiRoutes(): readonly Route[] {
  routes ??= buildRoutes();
  return routes;
}

/** The API's entry point: the request's span outermost (docs/operations.md, "Traces"), then its metrics, then the router. */
export function handleApiRequest(req: Request): Promise<Response> {
  return traceApiRequest(req, measureApiRequest);
}

async function measureApiRequest(req: Request): Promise<Response> {
  const started = performance.now();
  const matched = { template: 'unmatched' };
  const response = await routeApiRequest(req, matched);
  recordHttpRequest({ route: matched.template, method: req.method, status: response.status, durationSeconds: (performance.now() - started) / 1000 });
  return response;
}

/** The answer to `req`; `matched.template` becomes its route's template when one matches. */
async function routeApiRequest(req: Request, matched: { template: string }): Promise<Response> {
  const requestId = newRequestId();
  const headers = apiHeaders(requestId);
  const path = new URL(req.url).pathname.slice(API_PREFIX.length) || '/';
  const route = apiRoutes().find((r) => r.pattern.test(path));
  if (!route) {
    return errorResponse(new AppError('not_found', `No such endpoint: ${req.method} ${API_PREFIX}${path.slice(0, 200)}`), requestId, headers);
  }
  // The template, never the path, for the metrics, the log line and the span: a feed's path
  // holds its token, and paths with ids would make one route of every contract.
  matched.template = route.template;
  setRequestRoute(route.template);
  setTraceRoute(route.template, `${API_PREFIX}${path}`);
  if (!route.methods.includes(req.method)) {
    return route.wrongMethod?.(req, requestId, headers) ?? methodNotAllowed(req.method, route.methods, requestId, headers);
  }
  const head = req.method === 'HEAD';
  // HEAD is the GET answer without its body (trpc-to-openapi would answer any HEAD with an empty 204).
  const served = head ? new Request(req.url, { method: 'GET', headers: req.headers, signal: req.signal }) : req;
  const response = await withinDeadline(async (clock) => {
    const context = async () => requestContext(served, { db: await getDb(), readDb: await getReadDb() }, requestId, headers, clock);
    try {
      return await route.serve(served, headers, context);
    } catch (error) {
      return errorResponse(toAppError(error, requestId), requestId, headers);
    }
  }, requestId);
  // The one place every answer of an operation passes, errors and 304s included: the
  // deprecation headers of what the request used (server/rest/deprecations.ts).
  const used = usedDeprecations(route.operationIds[served.method]!, { url: served.url });
  addDeprecationHeaders(response.headers, used, used.length > 0 ? linkOrigin(served.headers, served.url) : '');
  if (!head) return response;
  await response.body?.cancel();
  return new Response(null, { status: response.status, statusText: response.statusText, headers: response.headers });
}
