import { TRPCError } from '@trpc/server';
import { z } from 'zod';
import { logger } from '@/server/observability/logger';

/**
 * The one error module. Services throw AppError; every transport (the REST API, the app's
 * tRPC endpoint, the pages) turns whatever was thrown into an AppError with toAppError()
 * and answers its status with errorEnvelope(). An AppError's message is written for the
 * API's users; anything else becomes a generic 500 whose details stay in the server log.
 */
export type ErrorCode =
  | 'invalid_request'
  | 'unauthorized'
  | 'forbidden'
  | 'insufficient_scope'
  | 'ip_not_allowed'
  | 'not_found'
  | 'method_not_allowed'
  | 'request_timeout'
  | 'conflict'
  | 'cursor_expired'
  | 'payload_too_large'
  | 'unsupported_media_type'
  | 'rate_limited'
  | 'internal_error'
  | 'service_unavailable';

export const STATUS_OF: Record<ErrorCode, number> = {
  invalid_request: 400,
  unauthorized: 401,
  forbidden: 403,
  // A restricted API key (docs/keys.md): the permission the operation needs is not the
  // key's, or the request came from an address the key does not allow.
  insufficient_scope: 403,
  ip_not_allowed: 403,
  not_found: 404,
  method_not_allowed: 405,
  request_timeout: 408,
  conflict: 409,
  // The event list's cursor (or since) is older than what it retains (EVENTS_RETENTION_DAYS).
  cursor_expired: 410,
  payload_too_large: 413,
  unsupported_media_type: 415,
  rate_limited: 429,
  internal_error: 500,
  service_unavailable: 503,
};

export interface ErrorDetail {
  param?: string;
  message: string;
}

export class AppError extends Error {
  constructor(
    public readonly code: ErrorCode,
    message: string,
    public readonly details: ErrorDetail[] = [],
  ) {
    super(message);
    this.name = 'AppError';
  }

  get status(): number {
    return STATUS_OF[this.code];
  }
}

export const UNAVAILABLE_MESSAGE = 'The service is temporarily unavailable. Retry in a few seconds.';
const INTERNAL_MESSAGE = 'Something went wrong on our side. Quote the request id if you contact support.';

/** An error and its causes, outermost first (at most five: cause chains can loop). */
export function* causeChain(error: unknown): Generator<unknown> {
  for (let e: unknown = error, depth = 0; e !== undefined && e !== null && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    yield e;
  }
}

/** The first string `code` down the cause chain: a SQLSTATE, ECONNREFUSED, a library's code. */
export function errorCodeOf(error: unknown, accept: (code: string) => boolean = () => true): string | undefined {
  for (const e of causeChain(error)) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && accept(code)) return code;
  }
  return undefined;
}

interface ZodIssueLike {
  code?: string;
  path: readonly PropertyKey[];
  message: string;
  keys?: readonly string[];
}

/**
 * Validation issues as the envelope's details, one per parameter: the path names the
 * parameter (`body` when the issue is about the whole value), and an unknown field is
 * named with the fields that are allowed.
 */
export function detailsOfIssues(issues: readonly ZodIssueLike[], allowedFields?: readonly string[]): ErrorDetail[] {
  return issues.flatMap((issue) =>
    issue.code === 'unrecognized_keys' && issue.keys
      ? issue.keys.map((key) => ({
          param: key,
          message: `Unknown field ${key}${allowedFields ? `; allowed fields are ${allowedFields.join(', ')}` : ''}.`,
        }))
      : [{ param: issue.path.length > 0 ? issue.path.map(String).join('.') : 'body', message: issue.message }],
  );
}

/** A 400 listing every validation issue. */
export function invalidRequest(issues: readonly ZodIssueLike[], allowedFields?: readonly string[]): AppError {
  const details = detailsOfIssues(issues, allowedFields);
  // Several problems read as one line: "a; b" (a message written as a sentence loses its
  // full stop there, not in its detail).
  const message = details.length > 1 ? details.map((d) => d.message.replace(/\.$/, '')).join('; ') : details.map((d) => d.message).join('');
  return new AppError('invalid_request', message, details);
}

// tRPC's own errors that reach a client through a transport, with the API's wording.
const TRPC_ERRORS: Partial<Record<TRPCError['code'], () => AppError>> = {
  NOT_FOUND: () => new AppError('not_found', 'No such endpoint.'),
  METHOD_NOT_SUPPORTED: () => new AppError('method_not_allowed', 'This method is not allowed here.'),
  PARSE_ERROR: () => new AppError('invalid_request', 'The request body is not valid JSON.', [{ param: 'body', message: 'Expected JSON.' }]),
  PAYLOAD_TOO_LARGE: () => new AppError('payload_too_large', 'The request body is too large.'),
  UNSUPPORTED_MEDIA_TYPE: () => new AppError('unsupported_media_type', 'Send the request body as application/json.'),
};

const CONNECTION_ERRORS = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'CONNECT_TIMEOUT', 'CONNECTION_CLOSED', 'CONNECTION_ENDED', 'CONNECTION_DESTROYED']);
// SQLSTATEs that mean "the database is unavailable or overloaded", not "a bug": a
// cancelled statement (timeout), a server shutting down, too many connections, and the
// whole class 08 of connection failures (a pooler reports a server it cannot reach as
// 08P01: PgBouncer's "server login has been failing").
const UNAVAILABLE_SQLSTATES = new Set(['57014', '57P01', '57P02', '57P03', '53300']);
/** Whether an error code means the database could not be reached or used right now (a 503, not a bug). */
export const isUnavailableCode = (code: string) => CONNECTION_ERRORS.has(code) || UNAVAILABLE_SQLSTATES.has(code) || /^08[0-9A-Z]{3}$/.test(code);
export const isDatabaseUnavailable = (error: unknown): boolean => errorCodeOf(error, isUnavailableCode) !== undefined;

/**
 * Anything thrown, as the AppError the client is answered with:
 * - an AppError anywhere down the cause chain, as it is;
 * - a validation error of a procedure's input (tRPC wraps zod's), as a 400 with details;
 * - tRPC's own errors (unknown procedure, unparsable body), with the API's codes;
 * - an unreachable or overloaded database, as a 503 the client can retry;
 * - anything else as a generic 500. Its message may hold SQL or a library's internals, so
 *   it is logged under the request id (unless `log` is false: the caller logs), never sent.
 */
export function toAppError(error: unknown, requestId: string, log = true): AppError {
  for (const e of causeChain(error)) {
    if (e instanceof AppError) return e;
    if ((e as Error | undefined)?.name === 'ZodError') {
      return invalidRequest((e as unknown as { issues: ZodIssueLike[] }).issues);
    }
    if (e instanceof TRPCError && TRPC_ERRORS[e.code] && !(e.cause instanceof Error && e.cause.name === 'ZodError')) {
      return TRPC_ERRORS[e.code]!();
    }
  }
  const unavailable = errorCodeOf(error, isUnavailableCode);
  if (unavailable !== undefined) {
    if (log) logger().error({ request_id: requestId, error_code: unavailable }, 'database unavailable');
    return new AppError('service_unavailable', UNAVAILABLE_MESSAGE);
  }
  if (log) logger().error({ request_id: requestId, err: error }, 'unexpected error');
  return new AppError('internal_error', INTERNAL_MESSAGE);
}

/** The codes the public API answers with (the others belong to the app's own endpoints). */
export const API_ERROR_CODES = [
  'invalid_request',
  'unauthorized',
  'forbidden',
  'insufficient_scope',
  'ip_not_allowed',
  'not_found',
  'method_not_allowed',
  'request_timeout',
  'cursor_expired',
  'rate_limited',
  'internal_error',
  'service_unavailable',
] as const satisfies readonly ErrorCode[];

/** The codes as a named schema, so that generated clients get an enum type to branch on. */
const errorCodeSchema = z.enum(API_ERROR_CODES).meta({
  id: 'ErrorCode',
  description:
    'Stable, machine-readable: invalid_request 400, unauthorized 401, forbidden 403, insufficient_scope 403 (the key lacks the permission the operation needs), ip_not_allowed 403 (the key does not allow the address the request came from), not_found 404, method_not_allowed 405, request_timeout 408 (the export body did not arrive in time), cursor_expired 410 (the event list no longer holds the events after that cursor: start again from an export), rate_limited 429, internal_error 500, service_unavailable 503.',
});

/** The error envelope's schema, for the OpenAPI document and the tests that validate against it. */
export const errorEnvelopeSchema = z
  .object({
    success: z.literal(false),
    error: z.object({
      code: errorCodeSchema,
      message: z.string().meta({ description: 'For people: what went wrong and what to do. Its wording may change.' }),
      details: z
        .array(z.object({ param: z.string().optional(), message: z.string() }))
        .meta({ description: 'One entry per problem, naming the parameter or body field (`param`) when there is one.' }),
    }),
    request_id: z.string().meta({ description: 'The X-Request-Id of the response; quote it to support.' }),
  })
  .meta({ id: 'Error', description: 'The body of every error response.' });

/** The error envelope of docs/api-decisions.md, for every status >= 400. */
export function errorEnvelope(error: AppError, requestId: string) {
  return {
    success: false as const,
    error: { code: error.code, message: error.message, details: error.details },
    request_id: requestId,
  };
}

/**
 * An error as one log entry: name, code and message of each error down the cause chain,
 * then the stack frames of the outermost one. The parameters of a failed query are left
 * out (Drizzle puts them in its message): they hold key hashes, e-mail addresses and
 * filters, which have no place in a log.
 */
export function describeForLog(error: unknown): string {
  const lines: string[] = [];
  let depth = 0;
  for (const e of causeChain(error)) {
    const prefix = depth++ > 0 ? 'caused by ' : '';
    if (!(e instanceof Error)) {
      lines.push(`${prefix}${typeof e === 'object' ? Object.prototype.toString.call(e) : String(e)}`);
      break;
    }
    const code = (e as { code?: unknown }).code;
    const message = e.message.replace(/\nparams: [\s\S]*$/, '\nparams: (not logged)');
    lines.push(`${prefix}${e.name}${typeof code === 'string' ? ` [${code}]` : ''}: ${message}`);
  }
  const frames = error instanceof Error ? (error.stack ?? '').split('\n').filter((line) => /^\s+at /.test(line)) : [];
  return [...lines, ...frames].join('\n');
}
