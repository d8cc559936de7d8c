import type { components } from './generated/openapi.js';

type ErrorBody = components['schemas']['Error'];

/** An error answer as an exception: status, the API's error code and message, and the request id to quote. */
export class ContractDataApiError extends Error {
  readonly status: number;
  readonly code: string;
  readonly requestId: string;
  readonly details: ErrorBody['error']['details'];

  constructor(status: number, body: ErrorBody) {
    super(`${status} ${body.error.code}: ${body.error.message} (request ${body.request_id})`);
    this.name = 'ContractDataApiError';
    this.status = status;
    this.code = body.error.code;
    this.requestId = body.request_id;
    this.details = body.error.details;
  }
}
