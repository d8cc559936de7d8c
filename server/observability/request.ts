import 'server-only';
import { isSpanContextValid, trace } from '@opentelemetry/api';
import { config } from '@/server/config';
import { clientAddressOf, SHARED_CLIENT_BUCKET } from '@/server/http/client-address';
import { logger } from './logger';
import { currentRequest, inRequestScope, type RequestRecord } from './request-scope';

/**
 * The observation of one request of a route handler: `observeRequest` runs the handler
 * with a record of the request in scope (./request-scope.ts), and when the answer is
 * complete (the Response returned, or, for a streamed body, its last byte passed on)
 * writes the request's one log line. (The API's metrics are recorded by its router, inside
 * the request's span: server/rest/router.ts.) Handlers refine the record while they run: the REST router
 * its route template, authentication the key id, the error envelope its code.
 *
 * Cheap on purpose (it runs on every API request): one record object, no copy of the
 * body (a streamed body is counted chunk by chunk as it passes), and the log line's
 * object is only built when its level is enabled.
 */

export type { RequestRecord } from './request-scope';

/**
 * Told of every observed request that an API key authenticated, once it is complete, while
 * key activity is recorded (KEY_ACTIVITY): the key's usage and request log
 * (server/usage/recorder.ts, registered by the transport that authenticates keys). A
 * registration point, so that this room at the bottom of server/ imports no feature.
 */
export type KeyRequestListener = (record: RequestRecord, url: string, clientAddress: string | null, userAgent: string | null) => void;

// On globalThis: Next.js may evaluate this module more than once in a process (one copy per bundle).
const KEY_REQUEST_LISTENER = Symbol.for('contract-data-api.key-request-listener');
type WithListener = typeof globalThis & { [KEY_REQUEST_LISTENER]?: KeyRequestListener };

/** Sets the one listener of key-authenticated requests (a second call replaces it: registering twice is harmless). */
export function onKeyRequest(listener: KeyRequestListener): void {
  (globalThis as WithListener)[KEY_REQUEST_LISTENER] = listener;
}
export { currentRequest } from './request-scope';

/** `req_` and 32 hex digits: the X-Request-Id of every answer and the request_id of its log lines. */
export function freshRequestId(): string {
  return `req_${crypto.randomUUID().replaceAll('-', '')}`;
}

export interface RequestMeta {
  request: Request;
  /** The route template until the handler knows a finer one (setRequestRoute). */
  route: string;
}

/** Runs `run` as the observed request `meta.request`. */
export async function observeRequest(meta: RequestMeta, run: () => Promise<Response>): Promise<Response> {
  // OBSERVABILITY=off: no line (the bench's baseline for what observing costs); the record
  // is still kept while per-key activity is recorded (KEY_ACTIVITY, server/usage/).
  const { observability, keyActivity } = config();
  if (!observability && !keyActivity) return run();
  // Read first: the tracing wrapper, outside this one, has its span active now.
  const span = trace.getActiveSpan()?.spanContext();
  const record: RequestRecord = {
    requestId: freshRequestId(),
    traceId: span && isSpanContextValid(span) ? span.traceId : undefined,
    method: meta.request.method,
    route: meta.route,
    status: 0,
    errorCode: undefined,
    durationMs: 0,
    bytes: 0,
    keyId: undefined,
    keyKind: undefined,
    aborted: false,
    startedAt: performance.now(),
    finished: false,
  };
  let response: Response;
  try {
    response = await inRequestScope(record, run);
  } catch (error) {
    // Next.js answers a throwing handler with its own 500.
    record.status = 500;
    record.errorCode = 'internal_error';
    logger().error({ request_id: record.requestId, err: error }, 'route handler threw');
    finish(record, meta.request);
    throw error;
  }
  record.status = response.status;
  // The id the client sees is the one of the line: a handler that chose its own keeps it.
  const answeredId = response.headers.get('x-request-id');
  if (answeredId) record.requestId = answeredId;
  else response = withRequestId(response, record.requestId);
  const body = response.body;
  const length = response.headers.get('content-length');
  if (body === null || meta.request.method === 'HEAD') {
    finish(record, meta.request);
    return response;
  }
  if (length !== null && /^[0-9]+$/.test(length)) {
    record.bytes = Number(length);
    finish(record, meta.request);
    return response;
  }
  return new Response(countedBody(body, record, meta.request), { status: response.status, statusText: response.statusText, headers: response.headers });
}

/**
 * A route handler observed as `route`: `export const GET = observed('/api/trpc/[trpc]', handler)`.
 * Extra arguments (Next.js's `{ params }`) pass through.
 */
export function observed<R extends Request, A extends unknown[]>(
  route: string,
  handler: (req: R, ...rest: A) => Promise<Response>,
): (req: R, ...rest: A) => Promise<Response> {
  return (req, ...rest) => observeRequest({ request: req, route }, () => handler(req, ...rest));
}

/** The request id of the request being served, if any. */
export function currentRequestId(): string | undefined {
  return currentRequest()?.requestId;
}

/** The route template of the request being served (the REST router knows it once it matched). */
export function setRequestRoute(route: string): void {
  const record = currentRequest();
  if (record && !record.finished) record.route = route;
}

/** The id (never the token) of the API key or feed token that authenticated the request; undefined to forget it. */
export function setRequestKeyId(keyId: string | undefined, kind?: 'api_key' | 'calendar_feed'): void {
  const record = currentRequest();
  if (record && !record.finished) {
    record.keyId = keyId;
    record.keyKind = keyId === undefined ? undefined : kind;
  }
}

/** The error code the request is answered with (the envelope's, server/errors.ts). */
export function setRequestErrorCode(code: string): void {
  const record = currentRequest();
  if (record && !record.finished) record.errorCode = code;
}

/** Every answer names its request (next-auth's do not set the header themselves). */
function withRequestId(response: Response, requestId: string): Response {
  try {
    response.headers.set('X-Request-Id', requestId);
    return response;
  } catch {
    // Immutable headers (Response.redirect): the same answer with a copy of them.
    const headers = new Headers(response.headers);
    headers.set('X-Request-Id', requestId);
    return new Response(response.body, { status: response.status, statusText: response.statusText, headers });
  }
}

/**
 * The body passed on chunk by chunk (no copy), counted; the request finishes when the
 * last chunk has been taken, or when the client cancels, or the body fails.
 */
function countedBody(body: ReadableStream<Uint8Array>, record: RequestRecord, req: Request): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        let chunk: ReadableStreamReadResult<Uint8Array>;
        try {
          chunk = await reader.read();
        } catch (error) {
          record.aborted = true;
          finish(record, req);
          controller.error(error);
          return;
        }
        if (chunk.done) {
          controller.close();
          finish(record, req);
          return;
        }
        record.bytes += chunk.value.byteLength;
        controller.enqueue(chunk.value);
      },
      cancel(reason) {
        record.aborted = true;
        finish(record, req);
        return reader.cancel(reason);
      },
    },
    // Pull only when the consumer asks: the source's pace (the client's) is kept.
    { highWaterMark: 0 },
  );
}

function finish(record: RequestRecord, req: Request): void {
  if (record.finished) return;
  record.finished = true;
  record.durationMs = Math.round((performance.now() - record.startedAt) * 100) / 100;
  if (record.status < 400) record.errorCode = undefined;
  const { observability, keyActivity } = config();
  let clientAddress: string | null | undefined;
  let userAgent: string | null | undefined;
  const keyRequestListener = (globalThis as WithListener)[KEY_REQUEST_LISTENER];
  if (keyActivity && record.keyKind === 'api_key' && keyRequestListener) {
    clientAddress = trustedClientAddress(req.headers);
    userAgent = userAgentOf(req.headers);
    keyRequestListener(record, req.url, clientAddress, userAgent);
  }
  if (!observability) return;
  const log = logger();
  if (!log.isLevelEnabled('info')) return;
  log.info(
    {
      request_id: record.requestId,
      trace_id: record.traceId ?? null,
      method: record.method,
      route: record.route,
      status: record.status,
      error_code: record.errorCode ?? null,
      duration_ms: record.durationMs,
      bytes: record.bytes,
      key_id: record.keyId ?? null,
      client_address: clientAddress === undefined ? trustedClientAddress(req.headers) : clientAddress,
      user_agent: userAgent === undefined ? userAgentOf(req.headers) : userAgent,
      ...(record.aborted ? { aborted: true } : {}),
    },
    'request',
  );
}

/** The address the configuration trusts (server/http/client-address.ts), or null when nothing can vouch for one. */
export function trustedClientAddress(headers: Headers): string | null {
  try {
    const address = clientAddressOf(headers);
    return address === SHARED_CLIENT_BUCKET ? null : address;
  } catch {
    return null; // an invalid configuration: reported at start, not on every line
  }
}

/** At most 256 characters: the header is the client's to fill. */
export function userAgentOf(headers: Headers): string | null {
  const agent = headers.get('user-agent');
  return agent === null ? null : agent.length > 256 ? `${agent.slice(0, 256)}…` : agent;
}
