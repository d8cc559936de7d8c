import { TRPCError } from '@trpc/server';
import { createOpenApiNodeHttpHandler } from 'trpc-to-openapi';
import { getDb, type Database } from '@/db/client';
import { AppError, type ErrorDetail } from '@/server/errors';
import { restRouter } from '@/server/trpc/root';
import { createInnerContext } from '@/server/trpc/init';
import { clientAddressOf } from './client-address';
import { errorResponse, newRequestId, toAppError } from './responses';
import { API_PREFIX } from './paths';
import { allowedMethods } from './routes';

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

  let state: RequestState;
  let response: { status: number; body: string | undefined };
  try {
    state = { db: await getDb(), requestId, requestHeaders: req.headers, responseHeaders: headers };
    response = await serveOpenApi(req, state);
  } catch (error) {
    return errorResponse(toAppError(error, requestId), requestId, headers);
  }

  if (response.status >= 200 && response.status < 300) {
    headers.set('Content-Type', 'application/json; charset=utf-8');
    return new Response(response.body, { status: response.status, headers });
  }
  return errorResponse(appErrorOf(state.failure, requestId), requestId, headers);
}

/** What one request's context and error handler need, found through the request object. */
interface RequestState {
  db: Database;
  requestId: string;
  requestHeaders: Headers;
  responseHeaders: Headers;
  failure?: unknown;
}
const requestStates = new WeakMap<object, RequestState>();

function stateOf(req: unknown): RequestState {
  const state = requestStates.get(req as object);
  if (!state) throw new Error('openapi-handler: request without state');
  return state;
}

type NodeHandler = (req: unknown, res: unknown) => Promise<void>;
let nodeHandler: NodeHandler | undefined;

/**
 * trpc-to-openapi's handler, created once. Its fetch adapter (createOpenApiFetchHandler)
 * creates it again on every request, which rebuilds the route table (and, outside
 * production, regenerates the whole OpenAPI document); the per-request parts (context,
 * error) are looked up through the request instead.
 */
function openApiHandler(): NodeHandler {
  nodeHandler ??= createOpenApiNodeHttpHandler({
    router: restRouter,
    createContext: ({ req }: { req: unknown }) => {
      const state = stateOf(req);
      return createInnerContext({
        db: state.db,
        requestId: state.requestId,
        headers: state.requestHeaders,
        clientIp: clientAddressOf(state.requestHeaders),
        setHeader: (name, value) => state.responseHeaders.set(name, value),
      });
    },
    onError: ({ error, req }: { error: unknown; req: unknown }) => {
      stateOf(req).failure = error;
    },
  } as never) as unknown as NodeHandler;
  return nodeHandler;
}

/**
 * What trpc-to-openapi 3.3.0's createOpenApiFetchHandler does (adapters/fetch.mjs), with
 * the handler created once: the request behind a proxy that answers `url` without the
 * endpoint and `body` already parsed, and a response object that collects the status and
 * the JSON text. Its headers (Content-Type) are not kept: the caller sets its own, as it did
 * when it copied only the body and status of the fetch adapter's Response.
 */
async function serveOpenApi(req: Request, state: RequestState): Promise<{ status: number; body: string | undefined }> {
  const url = new URL(req.url.replace(API_PREFIX, ''));
  const proxy = await createRequestProxy(req, url.toString());
  requestStates.set(proxy, state);
  return new Promise((resolve, reject) => {
    let statusCode: number | undefined;
    const res = {
      setHeader: () => {},
      get statusCode() {
        return statusCode;
      },
      set statusCode(code: number | undefined) {
        statusCode = code;
      },
      end: (body?: string) => resolve({ status: statusCode ?? 200, body }),
    };
    openApiHandler()(proxy, res).catch(reject);
  });
}

type ParsedBody = { isValid: true; data: unknown } | { isValid: false; cause: unknown };

async function requestBodyOf(req: Request): Promise<ParsedBody> {
  try {
    const contentType = req.headers.get('content-type');
    if (contentType?.includes('application/json')) return { isValid: true, data: JSON.parse(await req.text()) };
    if (contentType?.includes('application/x-www-form-urlencoded')) {
      const params = new URLSearchParams(await req.text());
      const data: Record<string, string[]> = {};
      for (const key of params.keys()) data[key] = params.getAll(key);
      return { isValid: true, data };
    }
    return { isValid: true, data: req.body };
  } catch (cause) {
    return { isValid: false, cause };
  }
}

async function createRequestProxy(req: Request, url: string): Promise<Request> {
  const body = await requestBodyOf(req);
  return new Proxy(req, {
    get: (target, prop) => {
      if (prop === 'url') return url ? url : target.url;
      if (prop === 'body') {
        if (!body.isValid) {
          throw new TRPCError({ code: 'PARSE_ERROR', message: 'Failed to parse request body', cause: body.cause });
        }
        return body.data;
      }
      return target[prop as keyof Request];
    },
  });
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
