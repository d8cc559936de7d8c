import { TRPCError } from '@trpc/server';
import { createOpenApiFetchHandler } from 'trpc-to-openapi';
import { getDb } from '@/db/client';
import { AppError, type ErrorDetail } from '@/server/errors';
import { appRouter } from '@/server/trpc/root';
import { createInnerContext } from '@/server/trpc/init';
import { clientIpOf, errorResponse, newRequestId, toAppError } from './responses';
import { allowedMethods } from './routes';

export const API_PREFIX = '/api/v1';

/** Headers on every REST response, success or error. */
export function baseApiHeaders(requestId: string): Headers {
  return new Headers({
    'X-Request-Id': requestId,
    'Cache-Control': 'no-store',
    'X-Content-Type-Options': 'nosniff',
  });
}

/**
 * Serves the JSON operations through trpc-to-openapi, then rewrites every error into the
 * spec's envelope: trpc-to-openapi's own error body ({ message, code, issues }) never
 * reaches a client.
 */
export async function handleRestRequest(req: Request): Promise<Response> {
  const requestId = newRequestId();
  const headers = baseApiHeaders(requestId);
  const path = new URL(req.url).pathname.slice(API_PREFIX.length) || '/';
  const allowed = allowedMethods(path);
  if (allowed.length === 0) {
    return errorResponse(new AppError('not_found', `No such endpoint: ${req.method} ${API_PREFIX}${path.slice(0, 200)}`), requestId, headers);
  }
  if (!allowed.includes(req.method)) {
    headers.set('Allow', allowed.join(', '));
    return errorResponse(
      new AppError('method_not_allowed', `${req.method} is not allowed here; use ${allowed.join(' or ')}.`),
      requestId,
      headers,
    );
  }

  let failure: unknown;
  let response: Response;
  try {
    const db = await getDb();
    response = await createOpenApiFetchHandler({
      endpoint: API_PREFIX,
      router: appRouter,
      req,
      createContext: () =>
        createInnerContext({
          db,
          requestId,
          headers: req.headers,
          clientIp: clientIpOf(req.headers),
          setHeader: (name, value) => headers.set(name, value),
        }),
      onError: ({ error }) => {
        failure = error;
      },
    });
  } catch (error) {
    return errorResponse(toAppError(error, requestId), requestId, headers);
  }

  if (response.ok) {
    headers.set('Content-Type', 'application/json; charset=utf-8');
    return new Response(response.body, { status: response.status, headers });
  }
  return errorResponse(appErrorOf(failure, requestId), requestId, headers);
}

/** Maps what trpc-to-openapi caught to the API's error. */
function appErrorOf(error: unknown, requestId: string): AppError {
  if (error instanceof TRPCError) {
    if (error.cause instanceof AppError) return error.cause;
    const issues = (error.cause as { issues?: { path: PropertyKey[]; message: string }[] } | undefined)?.issues;
    if (error.code === 'BAD_REQUEST' && error.cause?.name === 'ZodError' && issues) {
      const details: ErrorDetail[] = issues.map((issue) => ({
        param: issue.path.length > 0 ? issue.path.map(String).join('.') : undefined,
        message: issue.message,
      }));
      return new AppError('invalid_request', details.map((d) => d.message).join('; '), details);
    }
    return toAppError(error.cause ?? error, requestId);
  }
  return toAppError(error, requestId);
}
