import { AppError, errorEnvelope } from '@/server/errors';
import { currentRequestId, freshRequestId, setRequestErrorCode } from '@/server/observability/request';

/**
 * What every response of the REST API carries, and its error answers: the spec's
 * envelope for every status >= 400, with the request id in the body and a header.
 */

/**
 * The request's id: the one the observation of the request chose (the request_id of its
 * log lines, server/observability/request.ts), or a new one outside an observed request
 * (tests calling a handler directly).
 */
export function newRequestId(): string {
  return currentRequestId() ?? freshRequestId();
}

/** Headers on every REST response, success or error. */
export function apiHeaders(requestId: string): Headers {
  return new Headers({
    'X-Request-Id': requestId,
    'Cache-Control': 'no-store',
    'X-Content-Type-Options': 'nosniff',
  });
}

export function errorResponse(error: AppError, requestId: string, headers: Headers = apiHeaders(requestId)): Response {
  const h = new Headers(headers);
  h.set('Content-Type', 'application/json; charset=utf-8');
  h.set('X-Request-Id', requestId);
  h.set('Cache-Control', 'no-store');
  if (error.code === 'service_unavailable' && !h.has('Retry-After')) h.set('Retry-After', '5');
  setRequestErrorCode(error.code);
  return textResponse(safeJson(errorEnvelope(error, requestId)), error.status, h);
}

/**
 * A Response with a text body and its Content-Length: the request's log line then knows
 * its size without counting the body through a stream.
 */
export function textResponse(body: string, status: number, headers: Headers): Response {
  return bytesResponse(Buffer.from(body), status, headers);
}

/**
 * The same with a body already encoded (UTF-8): a Response given a string encodes it again
 * on its own, which for a page of 50 contracts (about 25 KB) costs about 20 µs a request.
 */
export function bytesResponse(body: Uint8Array<ArrayBuffer>, status: number, headers: Headers): Response {
  headers.set('Content-Length', String(body.byteLength));
  return new Response(body, { status, headers });
}

/** 405 naming the methods that are served (and an Allow header with them). */
export function methodNotAllowed(method: string, allowed: readonly string[], requestId: string, headers: Headers): Response {
  headers.set('Allow', allowed.join(', '));
  return errorResponse(
    new AppError('method_not_allowed', `${method} is not allowed here; use ${allowed.filter((m) => m !== 'HEAD').join(' or ')}.`),
    requestId,
    headers,
  );
}

/**
 * JSON with <, >, & and the two JavaScript line terminators written as \u escapes: the
 * same JSON to any parser, but an error that quotes the request back (an unknown
 * field's name, a path) never holds markup, whatever a browser or a log viewer makes of it.
 */
export function safeJson(value: unknown): string {
  return JSON.stringify(value).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
