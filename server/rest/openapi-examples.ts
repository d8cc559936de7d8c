import { eventUid, feedFooter, feedHeader } from '@/server/calendar/events';
import { allDayEvent } from '@/server/calendar/ics';
import { csvHeaderLine } from '@/server/contracts/csv';
import { toCsvLines } from '@/server/csv';
import { listContractsInput } from '@/server/contracts/schemas';
import { EXPORT_COLUMNS } from '@/server/contracts/shape';
import { unknownParameterDetail } from '@/server/http/query';
import { exampleContract, leaseData, leaseSummary } from '@/server/contracts/example';
import { EXPIRED_MESSAGE } from '@/server/events/service';

/**
 * Examples of the OpenAPI document: realistic bodies for every documented response, in the
 * shapes and with the messages the API really sends. tests/docs/openapi-document.test.ts
 * validates each one against the schema it illustrates.
 */

type Json = Record<string, unknown>;

const REQUEST_ID = 'req_7c9e6679742540de944be07fc1f90ae7';


const pendingSummary = {
  id: '8b1d5e2a-4c7f-4e0b-9a3d-6f2e1c0b9a87',
  title: 'Cleaning services agreement',
  status: 'processing',
  file_name: 'cleaning-2026.pdf',
  file_size: 318204,
  created_at: '2026-09-20T14:31:07.000Z',
  updated_at: '2026-09-20T14:31:09.000Z',
  organization_id: null,
};

const updatedEvent = {
  id: 'msg_2f0c5b3e8a1d4c6e9b7a0d1e2f3a4b5c',
  type: 'contract.updated',
  created_at: '2026-10-02T09:15:00.000Z',
  data: { contract: exampleContract, changed_fields: ['data.renewal_date'] },
};
const deletedEvent = {
  id: 'msg_6a1e9f0c3b2d4e7f8a9b0c1d2e3f4a5b',
  type: 'contract.deleted',
  created_at: '2026-10-03T16:40:12.000Z',
  data: { contract: { id: pendingSummary.id, organization_id: null } },
};
const EVENT_CURSOR = 'WzEsMTI4NF0';

/** The 200 examples of the JSON operations, by "METHOD path". */
export const OK_EXAMPLES: Record<string, Json> = {
  'get /contracts': {
    page: {
      summary: 'A page of two contracts',
      value: { success: true, data: { contracts: [leaseSummary, pendingSummary], pagination: { limit: 20, offset: 0, total: 2, total_exact: true, next_cursor: null, has_more: false } } },
    },
  },
  'get /contracts/{id}': {
    completed: {
      summary: 'A completed contract with its extracted data',
      value: { success: true, data: { contract: exampleContract } },
    },
    processing: {
      summary: 'A contract still being processed (no data yet)',
      value: { success: true, data: { contract: { ...pendingSummary, data: null } } },
    },
  },
  'get /events': {
    page: {
      summary: 'An update and a deletion, and the end of the list',
      value: { success: true, data: { events: [updatedEvent, deletedEvent], pagination: { limit: 50, next_cursor: EVENT_CURSOR, has_more: false } } },
    },
    nothingNew: {
      summary: 'A poll that found nothing new: the same cursor again',
      value: { success: true, data: { events: [], pagination: { limit: 50, next_cursor: EVENT_CURSOR, has_more: false } } },
    },
  },
  'get /events/{id}': {
    updated: { summary: 'A contract.updated event', value: { success: true, data: { event: updatedEvent } } },
  },
};

/** The CSV of the export example: the real writer, over the two example contracts. */
export function csvExample(): string {
  const rows = [
    { ...leaseSummary, ...leaseData, provider: leaseData.parties.provider, client: leaseData.parties.client },
    { ...pendingSummary, expiration_date: null, renewal_date: null, auto_renewal: null, contract_value: null, currency: null, provider: null, client: null, summary: null, confidence_score: null },
  ];
  return csvHeaderLine() + toCsvLines(rows.map((row) => EXPORT_COLUMNS.map((c) => (row as Record<string, string | number | boolean | null>)[c] ?? null)));
}

/** The same two contracts as NDJSON: one get-one detail a line. */
export function ndjsonExample(): string {
  return [{ ...leaseSummary, data: leaseData }, { ...pendingSummary, data: null }].map((contract) => `${JSON.stringify(contract)}\n`).join('');
}

/** A feed with one event: the real writer, over the example lease's renewal. */
export function icsExample(): string {
  const url = `https://contracts.example.com/contracts/${leaseSummary.id}`;
  return (
    feedHeader() +
    allDayEvent({
      uid: eventUid(leaseSummary.id, 'renewal'),
      stamp: new Date(leaseSummary.updated_at),
      date: leaseData.renewal_date,
      summary: `Renews automatically: ${leaseSummary.title}`,
      description: `Contract: ${url}`,
      url,
    }) +
    feedFooter()
  );
}

const UNKNOWN_PARAMETER = unknownParameterDetail('stauts', Object.keys(listContractsInput.shape));

const error = (code: string, message: string, details: { param?: string; message: string }[] = []) => ({
  success: false,
  error: { code, message, details },
  request_id: REQUEST_ID,
});

/** Examples of the error envelope, by status. */
export const ERROR_EXAMPLES: Record<number, Json> = {
  400: {
    invalidParameter: {
      summary: 'A parameter out of range',
      value: error('invalid_request', 'limit must be an integer between 1 and 100', [
        { param: 'limit', message: 'limit must be an integer between 1 and 100' },
      ]),
    },
    unknownParameter: {
      summary: 'A query parameter the operation does not take (here a typo on the list)',
      value: error('invalid_request', UNKNOWN_PARAMETER.message, [UNKNOWN_PARAMETER]),
    },
  },
  401: {
    missingKey: {
      summary: 'No key, or a malformed, unknown, expired or revoked one',
      value: error('unauthorized', 'Missing or invalid API key. Send a valid key in the X-API-Key header or as Authorization: Bearer <key>.'),
    },
  },
  403: {
    notAMember: {
      summary: 'organization_id names an organisation the caller is not in (or outside a restricted key\'s access)',
      value: error('forbidden', 'You are not a member of this organisation.', [
        { param: 'organization_id', message: 'You are not a member of this organisation.' },
      ]),
    },
    insufficientScope: {
      summary: 'The key lacks the permission the operation needs (here a read-only key on the export)',
      value: error('insufficient_scope', 'This API key lacks the permission contracts:export, which this operation needs. Create or edit a key with contracts:export under Settings → API keys.'),
    },
    ipNotAllowed: {
      summary: 'The key does not allow the address the request came from',
      value: error('ip_not_allowed', "This API key does not allow requests from 198.51.100.7. Use it from one of its allowed addresses, or edit the key's allowed addresses under Settings → API keys."),
    },
  },
  404: {
    notFound: { summary: 'No such contract for this caller', value: error('not_found', 'Contract not found.') },
  },
  405: {
    methodNotAllowed: {
      summary: 'A method this path does not serve (see Allow)',
      value: error('method_not_allowed', 'DELETE is not allowed here; use GET.'),
    },
  },
  410: {
    cursorExpired: {
      summary: 'A cursor older than the events the list keeps',
      value: error('cursor_expired', EXPIRED_MESSAGE, [{ param: 'cursor', message: EXPIRED_MESSAGE }]),
    },
  },
  408: {
    bodyTimeout: {
      summary: 'The export body stopped arriving',
      value: error('request_timeout', 'The request body did not arrive within 8 seconds.', [{ param: 'body', message: 'Send the whole body within 8 seconds.' }]),
    },
  },
  429: {
    rateLimited: {
      summary: 'Over the per-key limit',
      value: error('rate_limited', 'Rate limit exceeded: 60 requests per minute. Retry after 37 seconds.'),
    },
  },
  500: {
    internal: {
      summary: 'A failure inside the service',
      value: error('internal_error', 'Something went wrong on our side. Quote the request id if you contact support.'),
    },
  },
  503: {
    unavailable: {
      summary: 'The database is briefly unavailable',
      value: error('service_unavailable', 'The service is temporarily unavailable. Retry in a few seconds.'),
    },
  },
};

/** Examples of the calendar feed's errors (no API key; its own wording). */
export const CALENDAR_ERROR_EXAMPLES: Record<number, Json> = {
  404: {
    noFeed: {
      summary: 'A revoked, unknown or malformed feed token',
      value: error('not_found', 'No calendar feed at this address. It may have been revoked; create a new one under Settings → Calendar feeds.'),
    },
  },
  429: {
    feedQuota: {
      summary: 'The feed was read more than its hourly quota',
      value: error('rate_limited', 'This calendar feed was read more than 60 times in the last hour. Retry after 1800 seconds.'),
    },
  },
};

/** Example values of the response headers (components.headers). */
export const HEADER_EXAMPLES: Record<string, string | number> = {
  'X-Request-Id': REQUEST_ID,
  'X-RateLimit-Limit': 60,
  'X-RateLimit-Remaining': 59,
  'X-RateLimit-Reset': 1795521660,
  'RateLimit-Policy': '"general";q=60;w=60',
  RateLimit: '"general";r=59;t=60',
  'Retry-After': 37,
  ETag: 'W/"3q2-7wEjR0e9kq8Xb1xN2g"',
  'Last-Modified': 'Tue, 29 Sep 2026 10:00:00 GMT',
  'WWW-Authenticate': 'Bearer realm="Contract Data API", ApiKey realm="Contract Data API", header="X-API-Key"',
  Allow: 'GET, HEAD',
  Vary: 'X-API-Key, Authorization',
  Link: '<https://contracts.example.com/api/v1/contracts?limit=2&cursor=WzEsIi1jcmVhdGVkX2F0Il0>; rel="next"',
};
