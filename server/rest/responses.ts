import { AppError, type ErrorDetail } from '@/server/errors';

/**
 * The REST API's response shapes, built in one place: the spec's error envelope for
 * every status >= 400, and the headers every response carries.
 */

export function newRequestId(): string {
  return `req_${crypto.randomUUID().replaceAll('-', '')}`;
}

export function errorBody(error: AppError, requestId: string) {
  return {
    success: false as const,
    error: { code: error.code, message: error.message, details: error.details as ErrorDetail[] },
    request_id: requestId,
  };
}

export function errorResponse(error: AppError, requestId: string, headers?: HeadersInit): Response {
  const h = new Headers(headers);
  h.set('Content-Type', 'application/json; charset=utf-8');
  h.set('X-Request-Id', requestId);
  h.set('Cache-Control', 'no-store');
  if (error.code === 'service_unavailable' && !h.has('Retry-After')) h.set('Retry-After', '5');
  return new Response(safeJson(errorBody(error, requestId)), { status: error.status, headers: h });
}

/**
 * JSON with <, >, & and the two JavaScript line terminators written as \u escapes: the
 * same JSON to any parser, but an error that quotes the request back (an unknown
 * field's name, a path) never holds markup, whatever a browser or a log viewer makes of it.
 */
export function safeJson(value: unknown): string {
  return JSON.stringify(value).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

const CONNECTION_ERRORS = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'CONNECT_TIMEOUT', 'CONNECTION_CLOSED', 'CONNECTION_ENDED', 'CONNECTION_DESTROYED']);
// SQLSTATE classes that mean "the database is unavailable or overloaded", not "a bug".
const UNAVAILABLE_SQLSTATES = new Set(['57014', '57P01', '57P02', '57P03', '53300', '08000', '08001', '08003', '08006']);

function codeOf(error: unknown): string | undefined {
  for (let e: unknown = error, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && (CONNECTION_ERRORS.has(code) || UNAVAILABLE_SQLSTATES.has(code))) return code;
  }
  return undefined;
}

/**
 * Any thrown value as an AppError. Unknown errors become a generic 500 (their message
 * may hold SQL or a library's internals, so it is logged, never sent); an unreachable or
 * overloaded database becomes a 503 the client can retry.
 */
export function toAppError(error: unknown, requestId: string): AppError {
  for (let e: unknown = error, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    if (e instanceof AppError) return e;
  }
  if (codeOf(error)) {
    console.error(`[${requestId}] database unavailable: ${codeOf(error)}`);
    return new AppError('service_unavailable', 'The service is temporarily unavailable. Retry in a few seconds.');
  }
  console.error(`[${requestId}] unexpected error: ${describeForLog(error)}`);
  return new AppError('internal_error', 'Something went wrong on our side. Quote the request id if you contact support.');
}

/**
 * An error as one log entry: name, code and message of each error down the cause chain,
 * then the stack frames of the outermost one. The parameters of a failed query are left
 * out (Drizzle puts them in its message): they hold key hashes, e-mail addresses and
 * filters, which have no place in a log.
 */
export function describeForLog(error: unknown): string {
  const lines: string[] = [];
  for (let e: unknown = error, depth = 0; e !== undefined && e !== null && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    if (!(e instanceof Error)) {
      lines.push(`${depth > 0 ? 'caused by ' : ''}${typeof e === 'object' ? Object.prototype.toString.call(e) : String(e)}`);
      break;
    }
    const code = (e as { code?: unknown }).code;
    const message = e.message.replace(/\nparams: [\s\S]*$/, '\nparams: (not logged)');
    lines.push(`${depth > 0 ? 'caused by ' : ''}${e.name}${typeof code === 'string' ? ` [${code}]` : ''}: ${message}`);
  }
  const frames = error instanceof Error ? (error.stack ?? '').split('\n').filter((line) => /^\s+at /.test(line)) : [];
  return [...lines, ...frames].join('\n');
}
