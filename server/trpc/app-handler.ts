import { fetchRequestHandler } from '@trpc/server/adapters/fetch';
import { getDb } from '@/db/client';
import { currentUser } from '@/server/auth/session';
import { clientAddressOf } from '@/server/rest/client-address';
import { describeForLog, newRequestId } from '@/server/rest/responses';
import { isSameOriginRequest } from '@/server/rest/same-origin';
import { createInnerContext } from './init';
import { internalRouter } from './root';

/**
 * The app's own tRPC endpoint (/api/trpc), used by the settings pages with the session
 * cookie. It serves the internal router only: the REST API's procedures are not here.
 */
export async function handleAppTrpcRequest(req: Request): Promise<Response> {
  if (req.method !== 'GET' && !isSameOriginRequest(req)) {
    return Response.json({ error: { message: 'Cross-site request refused.' } }, { status: 403 });
  }
  const requestId = newRequestId();
  const response = await fetchRequestHandler({
    endpoint: '/api/trpc',
    req,
    router: internalRouter,
    // Mutations only over POST; batching is not needed by the pages.
    allowBatching: false,
    createContext: async () =>
      createInnerContext({
        db: await getDb(),
        requestId,
        headers: req.headers,
        clientIp: clientAddressOf(req.headers),
        sessionUser: await currentUser(),
      }),
    onError: ({ error }) => {
      if (error.code === 'INTERNAL_SERVER_ERROR') console.error(`[${requestId}] app trpc error: ${describeForLog(error.cause ?? error)}`);
    },
  });
  response.headers.set('Cache-Control', 'no-store');
  response.headers.set('X-Request-Id', requestId);
  return response;
}
