import 'server-only';
import { fetchRequestHandler } from '@trpc/server/adapters/fetch';
import { currentUser } from '@/server/auth/session';
import { getDb } from '@/server/database';
import { AppError, toAppError } from '@/server/errors';
import { INTERNAL_BODY_LIMIT, readBoundedBody } from '@/server/http/body';
import { requestContext } from '@/server/http/context';
import { errorResponse, newRequestId } from '@/server/http/responses';
import { isSameOriginRequest } from '@/server/http/same-origin';
import { traceRoute } from '@/server/observability/tracing';
import { setRequestErrorCode } from '@/server/observability/request';
import { internalRouter } from './root';

/**
 * The app's own tRPC endpoint (/api/trpc), used by the settings pages with the session
 * cookie. It serves the internal router only: the REST API's procedures are not here.
 */
export function handleAppTrpcRequest(req: Request): Promise<Response> {
  return traceRoute(req, '/api/trpc/{procedure}', serveAppTrpcRequest);
}

async function serveAppTrpcRequest(req: Request): Promise<Response> {
  const requestId = newRequestId();
  if (req.method !== 'GET' && !isSameOriginRequest(req)) {
    return errorResponse(new AppError('forbidden', 'Cross-site request refused.'), requestId);
  }
  // The pages send a few KiB: a body over 100 KiB is a 413 before it is read in full
  // (tRPC would buffer all of it).
  const body = await readBoundedBody(req, INTERNAL_BODY_LIMIT, requestId);
  if (body instanceof Response) return body;
  const bounded = new Request(req.url, { method: req.method, headers: req.headers, body: body as BodyInit | undefined, signal: req.signal });
  const responseHeaders = new Headers();
  const response = await fetchRequestHandler({
    endpoint: '/api/trpc',
    req: bounded,
    router: internalRouter,
    // Mutations only over POST; batching is not needed by the pages.
    allowBatching: false,
    createContext: async () => {
      // The settings pages write and read back tokens: everything on the primary.
      const db = await getDb();
      return { ...requestContext(bounded, { db, readDb: db }, requestId, responseHeaders), sessionUser: await currentUser() };
    },
    // The status of server/errors.ts's mapping, as the REST API answers it.
    responseMeta: ({ errors }) => {
      if (!errors[0]) return {};
      const answered = toAppError(errors[0], requestId, false);
      setRequestErrorCode(answered.code);
      return { status: answered.status };
    },
    // Logs what maps to a 500 or 503, once, under the request id.
    onError: ({ error }) => void toAppError(error, requestId),
  });
  response.headers.set('Cache-Control', 'no-store');
  response.headers.set('X-Request-Id', requestId);
  return response;
}
