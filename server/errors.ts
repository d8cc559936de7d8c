/**
 * The one domain error type. Services throw it; the HTTP layers map it once to a status
 * and the spec's error envelope. Its message is written for the API's users; anything
 * else that is thrown becomes a generic 500 whose details stay in the server log.
 */
export type ErrorCode =
  | 'invalid_request'
  | 'unauthorized'
  | 'forbidden'
  | 'not_found'
  | 'method_not_allowed'
  | 'conflict'
  | 'rate_limited'
  | 'internal_error'
  | 'service_unavailable';

export const STATUS_OF: Record<ErrorCode, number> = {
  invalid_request: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  conflict: 409,
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
