import 'server-only';
import { generateOpenApiDocument } from 'trpc-to-openapi';
import type { ZodOpenApiOperationObject } from 'zod-openapi';
import { exportContractsBody } from '@/server/contracts/schemas';
import { EXPORT_COLUMNS } from '@/server/contracts/shape';
import { errorEnvelopeSchema } from '@/server/errors';
import { restRouter } from '@/server/trpc/root';
import { CHANGELOG, changelogVersion } from './changelog';
import { changelogSection } from './changelog-markdown';
import { DEPRECATIONS } from './deprecations';
import { calendarFeedOpenApi } from './openapi-calendar-feed';
import { markDeprecations } from './openapi-deprecations';
import { addWebhooks } from './openapi-webhooks';
import { addCodeSamples } from './code-samples';
import { csvExample, ERROR_EXAMPLES, HEADER_EXAMPLES, ndjsonExample, OK_EXAMPLES } from './openapi-examples';
import { API_PREFIX, DOCUMENT_PATH, EXPORT_OPERATION_ID, EXPORT_PATH } from '@/server/http/api-paths';

/**
 * The OpenAPI 3.1 document, generated from the same zod schemas that validate requests
 * and responses. trpc-to-openapi writes the JSON operations; the export operation, the
 * error envelope and the response headers are added here, in one pass.
 */

type Json = Record<string, unknown>;

// The reference page (/docs/api) shows this as its introduction; each heading becomes a
// section of its sidebar.
const API_DESCRIPTION = `Read-only access to the contracts you can see in the contract renewal service: your personal contracts and those of your organisations.

## Authentication
Send an API key in the \`X-API-Key\` header, or as \`Authorization: Bearer <key>\`, on every request; create keys under Settings → API Keys. Both headers take the same keys with the same limits; two different keys in one request are a \`400\`, and an \`Authorization\` header with another scheme (Basic, from a proxy in front) is left alone. A missing, malformed, unknown, expired or revoked key gets \`401\` with one message for all, and a \`WWW-Authenticate\` header: a \`Bearer\` challenge and an \`ApiKey\` challenge naming the \`X-API-Key\` header (the same for every bad key, like the body). The calendar feed is the exception: calendar apps cannot send headers, so it is opened by the secret token in its address.

## Restricted keys
A key can be limited (Settings → API Keys, or \`npm run apikey -- create\` with \`--access\`, \`--permissions\`, \`--allowed-ips\`, \`--organization\`):
- **Access**: everything its owner can see (the default), or a chosen set: the owner's personal contracts and some of their organisations; an organisation's own key reads that organisation only. For a restricted key, contracts outside its access are like other people's: list and export leave them out, get-one answers \`404\`, and \`organization_id\` of an organisation outside its access is the \`403 forbidden\` of an organisation the caller is not in. An organisation can also take its contracts away from members' personal keys (its policy, or "remove access" on one key): they are then outside the key's access in the same way.
- **Permissions**: \`contracts:read\` (list and get one) and \`contracts:export\` (the CSV export); each operation names the one it needs (its \`security\` lists it, and \`x-required-permission\`). Without it the answer is \`403\` with code \`insufficient_scope\`, a message naming the permission and \`WWW-Authenticate: Bearer error="insufficient_scope", scope="contracts:export"\` (RFC 6750); it counts against no quota.
- **Allowed addresses**: up to 20 IPv4/IPv6 addresses and CIDR ranges. A request from any other address is \`403 ip_not_allowed\`, naming the address the API saw; it spends none of the key's quotas and counts as a failed attempt of that address (after 30 a minute that address gets \`429\`, as for bad keys).
A rolled key has a new secret with the same id, restrictions and rate limits; the previous secret works until the end of the grace its owner chose, then gets \`401\`.

## Errors
Every error is JSON: \`{"success": false, "error": {"code", "message", "details"}, "request_id"}\`. Branch on \`code\` (stable, listed in \`ErrorCode\`); \`message\` is for people; \`details\` names the parameter at fault. Every response carries \`X-Request-Id\`, the same as \`request_id\`: quote it to support. A method a path does not serve gets \`405\` with \`Allow\`.

## Query parameters
Each operation takes the query parameters listed for it and no others: an unknown one (a typo such as \`stauts=active\`, a tracking or cache-busting parameter a tool appends) is a \`400\` that names it, suggests the parameter probably meant and lists the allowed ones, rather than being ignored and silently widening the query. A parameter given twice is a \`400\` too. The export takes its filters in its JSON body and no query parameters.

## Rate limits
60 requests per minute per key for list and get-one; 10 exports per hour per key, counted separately. Successful responses carry \`X-RateLimit-Limit\`, \`X-RateLimit-Remaining\` and \`X-RateLimit-Reset\` (and the IETF draft's \`RateLimit-Policy\` and \`RateLimit\`); a \`429\` carries \`Retry-After\` in seconds. So does a \`503\`.

## Caching and conditional requests
List, get-one, the calendar feed and this document carry a weak \`ETag\` (as GitHub's: derived from the content). Send it back in \`If-None-Match\` and an unchanged answer is \`304 Not Modified\` with no body. As on GitHub, a \`304\` does not count against the key's rate limit (its headers show the key's state unchanged); conditional requests have a quota of their own, ten times the general one, because each still runs the query that proves nothing changed. JSON answers are \`Cache-Control: private, no-cache\` with \`Vary: X-API-Key, Authorization\`: a client's own cache may keep them but revalidates before each use, and no shared cache keeps them. The calendar feed also sends \`Last-Modified\` (when its content last changed) and answers \`If-Modified-Since\`, which some calendar apps send instead. \`HEAD\` is served wherever \`GET\` is.

## Pagination
\`limit\` (1 to 100, default 50) with \`cursor\` (pass \`pagination.next_cursor\`, also in \`Link: <…>; rel="next"\`) or \`offset\`; \`pagination.total\` counts every match. Pages are stable for a given \`sort\` (ties are broken by id).

## CSV
The export is RFC 4180: UTF-8, CRLF line ends (also after the last row), a header row, fields quoted only when they hold a comma, a quote or a line break (quotes doubled). \`bom: true\` starts the file with a UTF-8 byte order mark: Excel needs it to read accents, and Python's \`encoding="utf-8-sig"\` or most CSV libraries drop it. Dates are \`YYYY-MM-DD\`; timestamps are ISO 8601 in UTC (\`2026-09-29T10:00:00.000Z\`), or with \`date_format: "excel"\` \`2026-09-29 10:00:00\` (UTC), which Excel reads as a date and time in every locale (it leaves the ISO form as text). Booleans are \`true\`/\`false\`, numbers have a dot and no grouping, null is an empty cell. A text cell whose first non-whitespace character is \`=\`, \`+\`, \`-\` or \`@\` (leading spaces, tabs and line breaks do not hide a formula), or that starts with a tab or carriage return, gets a leading apostrophe (OWASP CSV injection): scripts see that apostrophe too.

## Typed client
A TypeScript client generated from this document (openapi-typescript types over openapi-fetch) lives in the repository under \`clients/typescript\`; its code samples are shown with each operation.`;

// What a client may rely on as the API changes (docs/api-changes.md, for clients), before the changelog.
const CHANGES_DESCRIPTION = `## Changes and deprecation
\`/api/v1\` changes only in ways that keep a working client working: new operations, new optional parameters, new fields in answers, new values in answers' enumerations (error codes, statuses, webhook event types) and new webhook events. Write clients that ignore fields, values and events they do not know. Something that is to go is deprecated first: it is marked \`deprecated\` in this document, and every answer to a request that used it (a parameter it sent, or an operation whose answers carry a deprecated field) has \`Deprecation: @<Unix time of the announcement>\` (RFC 9745), \`Sunset: <HTTP date>\` (RFC 8594: when it may be gone, at least 12 months after the announcement) and \`Link: <…/docs/changelog#…>; rel="deprecation"\` to its changelog entry. A change that cannot be made so would be a new version, \`/api/v2\`, and \`/api/v1\` would keep answering beside it for at least 12 months. \`info.version\` is the version of the newest changelog entry below.`;

/** The introduction: the API's conventions, then the change policy and the changelog (links on `origin`). */
const apiDescription = (origin: string) => `${API_DESCRIPTION}\n\n${CHANGES_DESCRIPTION}\n\n${changelogSection(CHANGELOG, origin)}`;

const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: 'Malformed request: a parameter out of range or of the wrong type, an unknown query parameter, a parameter given twice, or two different API keys. The message and `details` name the parameter.',
  401: 'Missing, malformed, unknown, expired or revoked API key (one answer for all), with `WWW-Authenticate`.',
  403: 'Forbidden, by `code`: `forbidden`: `organization_id` names an organisation the caller is not in, or outside the key\'s access; `insufficient_scope`: the key lacks the permission this operation needs (the message names it; `WWW-Authenticate: Bearer error="insufficient_scope", scope="…"`); `ip_not_allowed`: the key does not allow the address the request came from (the message names it). None of them counts against the key\'s quotas.',
  404: 'The contract (or the event) does not exist or the caller cannot access it.',
  405: 'The path does not serve the request\'s method (this operation\'s path answers other methods so); `Allow` lists the methods it serves.',
  408: 'The request body did not arrive in full within the request deadline (8 seconds unless configured otherwise). Nothing was counted against the export quota; send the body again, whole.',
  410: 'The event list no longer holds the events after this `cursor` (or `since`): they are kept `EVENTS_RETENTION_DAYS` (30 days by default). Code `cursor_expired`; start again from an export.',
  429: 'Rate limit exceeded; retry after `Retry-After` seconds.',
  500: 'Failure inside the service; quote `request_id` to support.',
  503: 'The database is temporarily unavailable; retry after `Retry-After` seconds.',
};


const OK_DESCRIPTIONS: Record<string, string> = {
  'get /contracts': 'A page of contracts, newest first unless `sort` says otherwise, with the total that match.',
  'get /contracts/{id}': 'The contract, with its extracted data once it is completed.',
  'get /events': 'A page of the caller\'s events after the cursor, oldest first (empty at the end of the list, with the same cursor).',
  'get /events/{id}': 'The event, as its webhook delivers it.',
};

// Which errors each operation can answer, by "METHOD path".
const ERRORS_OF: Record<string, number[]> = {
  [`get /contracts`]: [400, 401, 403, 405, 429, 500, 503],
  [`get /contracts/{id}`]: [400, 401, 403, 404, 405, 429, 500, 503],
  [`post ${EXPORT_PATH}`]: [400, 401, 403, 405, 408, 429, 500, 503],
  [`get /events`]: [400, 401, 403, 405, 410, 429, 500, 503],
  [`get /events/{id}`]: [400, 401, 403, 404, 405, 429, 500, 503],
};

// `required` as OpenAPI means it: true where every such answer carries the header.
const HEADERS: Json = {
  'X-Request-Id': { required: true, description: 'Identifier of this request, also in error bodies.', schema: { type: 'string' } },
  'X-RateLimit-Limit': { required: false, description: 'Requests allowed in the current window for this key and bucket. Sent whenever the rate-limit store answered (not when it was unreachable and the request was served anyway).', schema: { type: 'integer', minimum: 1 } },
  'X-RateLimit-Remaining': { required: false, description: 'Requests left in the current window.', schema: { type: 'integer', minimum: 0 } },
  'X-RateLimit-Reset': { required: false, description: 'Unix time (seconds) at which the window frees capacity again.', schema: { type: 'integer', minimum: 0 } },
  'RateLimit-Policy': { required: false, description: 'IETF draft header (draft-ietf-httpapi-ratelimit-headers-11): the quota policy, for example `"general";q=60;w=60`.', schema: { type: 'string' } },
  RateLimit: { required: false, description: 'IETF draft header: the current quota state, for example `"general";r=12;t=37` (remaining, seconds to reset).', schema: { type: 'string' } },
  'Retry-After': { required: true, description: 'Seconds to wait before retrying (whole seconds, at least 1).', schema: { type: 'integer', minimum: 1 } },
  Link: {
    required: false,
    description: 'RFC 8288: the next page, `<https://…/api/v1/contracts?…&cursor=…>; rel="next"`, when there is one (the same cursor as `pagination.next_cursor`).',
    schema: { type: 'string' },
  },
  ETag: { required: true, description: 'A weak entity tag of this answer (RFC 9110 8.8.3). Send it in `If-None-Match` to get `304` while the answer is unchanged.', schema: { type: 'string', pattern: '^W/"[A-Za-z0-9_-]+"$' } },
  'Last-Modified': { required: true, description: 'When the feed\'s content last changed (HTTP date, whole seconds); send it in `If-Modified-Since`.', schema: { type: 'string' } },
  'Cache-Control': { required: true, description: '`private, no-cache`: a client\'s own cache may keep the answer but revalidates it (`If-None-Match`) before each use; no shared cache keeps it.', schema: { type: 'string' } },
  Vary: { required: true, description: '`X-API-Key, Authorization`: the answer depends on the key.', schema: { type: 'string' } },
  'WWW-Authenticate': { required: true, description: 'RFC 9110 11.6.1: a `Bearer` challenge (RFC 6750) and an `ApiKey` challenge naming the `X-API-Key` header; the same for every bad key.', schema: { type: 'string' } },
  'WWW-Authenticate-Insufficient-Scope': {
    required: false,
    description: 'With `insufficient_scope` only (RFC 6750 3.1): `Bearer error="insufficient_scope", scope="<the permission the operation needs>"`.',
    schema: { type: 'string' },
  },
  Allow: { required: true, description: 'The methods this path serves.', schema: { type: 'string' } },
};

for (const [name, example] of Object.entries(HEADER_EXAMPLES)) (HEADERS[name] as Json).example = example;

const ref = (name: string) => ({ $ref: `#/components/headers/${name}` });
const named = (...names: string[]) => Object.fromEntries(names.map((n) => [n, ref(n)]));
const RATE_HEADERS = ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset', 'RateLimit-Policy', 'RateLimit'];
/** What a cacheable JSON answer (200 and 304 of list and get-one) carries besides the request id. */
const REPRESENTATION_HEADERS = ['ETag', 'Cache-Control', 'Vary'];

/** The headers of an answer of an operation that takes an API key. */
function headersFor(status: number): Json {
  switch (status) {
    case 200:
      return named('X-Request-Id', ...RATE_HEADERS, ...REPRESENTATION_HEADERS);
    case 304:
      return named('X-Request-Id', ...REPRESENTATION_HEADERS, ...RATE_HEADERS);
    case 403:
      return { ...named('X-Request-Id', ...RATE_HEADERS), 'WWW-Authenticate': ref('WWW-Authenticate-Insufficient-Scope') };
    case 400:
    case 404:
    case 408:
    case 410:
    case 500:
      return named('X-Request-Id', ...RATE_HEADERS);
    case 401:
      return named('X-Request-Id', 'WWW-Authenticate');
    case 405:
      return named('X-Request-Id', 'Allow');
    case 429:
      return named('X-Request-Id', ...RATE_HEADERS, 'Retry-After');
    case 503:
      return named('X-Request-Id', 'Retry-After');
    default:
      return named('X-Request-Id');
  }
}

function errorResponses(statuses: number[], headers: (status: number) => Json = headersFor): Json {
  return Object.fromEntries(
    statuses.map((status) => [
      String(status),
      {
        description: ERROR_DESCRIPTIONS[status],
        headers: headers(status),
        content: {
          'application/json': { schema: { $ref: '#/components/schemas/Error' }, ...(ERROR_EXAMPLES[status] ? { examples: ERROR_EXAMPLES[status] } : {}) },
        },
      },
    ]),
  );
}

/** A 304: no body, the validators and caching headers the 200 had. */
function notModifiedResponse(headers: Json): Json {
  return {
    description: 'Not Modified: `If-None-Match` named the current `ETag` (or `If-Modified-Since` is not older than `Last-Modified`, for the calendar feed). No body: use your stored copy. Does not count against the key\'s rate limit.',
    headers,
  };
}

/** The export body as text: any Content-Type is read as JSON (so `curl -d '{…}'` works). */
const exportBodyAsText = {
  schema: { type: 'string' as const, contentMediaType: 'application/json', contentSchema: { $ref: '#/components/schemas/ExportRequest' } },
  example: '{"status":"completed","sort":"renewal_date","bom":true}',
};

/**
 * The permission each operation needs (docs/keys.md), as OpenAPI 3.1 writes a role a
 * non-OAuth scheme requires: in the security requirement's list.
 */
const PERMISSION_OF: Record<string, string> = {
  'get /contracts': 'contracts:read',
  'get /contracts/{id}': 'contracts:read',
  'get /events': 'contracts:read',
  'get /events/{id}': 'contracts:read',
  [`post ${EXPORT_PATH}`]: 'contracts:export',
};
const securityFor = (permission: string): Record<string, string[]>[] => [{ ApiKeyAuth: [permission] }, { BearerAuth: [permission] }];
const permissionNote = (permission: string) => ` Needs the permission \`${permission}\` (a key without it gets \`403 insufficient_scope\`).`;

/** The export: a plain handler (CSV), so its operation is written here whole. */
function exportOperation(): ZodOpenApiOperationObject {
  return {
    operationId: EXPORT_OPERATION_ID,
    summary: 'Export contracts as CSV',
    description: `Every matching contract as RFC 4180 CSV with a header row, in list order (or the body's \`sort\`). Columns: ${EXPORT_COLUMNS.join(', ')}, or the body's \`columns\` in their order. Null values are empty cells; text cells that a spreadsheet would run as a formula are prefixed with an apostrophe. \`bom: true\` starts the file with a UTF-8 byte order mark for Excel, and \`date_format: "excel"\` writes timestamps the way Excel reads them (see CSV in the introduction). \`format: "ndjson"\` answers one contract detail per line instead (JSON, exact: what a program keeping a copy reads back), with \`X-Events-Cursor\` to follow the event list from. The body takes the list's filters with JSON types (numbers, booleans) and is optional; it is read as JSON whatever its Content-Type; the query takes no parameters. Rate limited separately: 10 exports per hour per key.${permissionNote('contracts:export')}`,
    tags: ['Contracts'],
    security: securityFor('contracts:export'),
    'x-required-permission': 'contracts:export',
    requestBody: {
      required: false,
      description:
        'The filters, order and format, as JSON. The body is read as JSON whatever its Content-Type, so the text forms below (what `curl -d` and some HTTP libraries send) are accepted too. No body, an empty body or `{}` export everything. At most 16 KiB.',
      content: {
        'application/json': {
          schema: exportContractsBody,
          examples: {
            renewals: { summary: 'Completed contracts by renewal date, for Excel', value: { status: 'completed', sort: 'renewal_date', bom: true, date_format: 'excel' } },
            columns: { summary: 'A few columns of one organisation', value: { organization_id: 'ae0bd8f6-9f24-4bf8-8398-17aeb94aa72f', columns: ['id', 'title', 'renewal_date'] } },
          },
        },
        'text/plain': exportBodyAsText,
        'application/x-www-form-urlencoded': exportBodyAsText,
      },
    },
    responses: {
      '200': {
        description: 'The CSV file (attachment named contracts-YYYY-MM-DD.csv), streamed. Not cached (`Cache-Control: no-store`).',
        headers: {
          ...named('X-Request-Id', ...RATE_HEADERS),
          'Content-Disposition': {
            required: true,
            description: 'attachment; filename="contracts-YYYY-MM-DD.csv"',
            schema: { type: 'string' },
          },
          'X-Events-Cursor': {
            required: true,
            description:
              'The place in the event list just before the export read its first row: pass it as `cursor` to GET /api/v1/events and apply the events from there (upserts, deletions, the access events) to the copy made from this file, and the copy stays equal to what the key lists (every change that the file may have missed commits after this place). See "The event list" in the API guide.',
            schema: { type: 'string' },
          },
        },
        content: {
          'text/csv': {
            schema: {
              type: 'string',
              description:
                'RFC 4180: UTF-8, lines end with CRLF (the last one too), a header row first; with `bom: true` the file starts with U+FEFF. Dates are YYYY-MM-DD, timestamps ISO 8601 in UTC (with `date_format: "excel"`: YYYY-MM-DD HH:MM:SS in UTC), booleans true/false, numbers with a dot and no grouping, empty cells for null.',
            },
            example: csvExample(),
          },
          'application/x-ndjson': {
            schema: {
              type: 'string',
              description:
                'With `"format": "ndjson"`: one JSON object per line, each a `ContractDetail` (the `contract` of GET /api/v1/contracts/{id}), lines ending with LF, no header; the attachment is named contracts-YYYY-MM-DD.ndjson.',
            },
            example: ndjsonExample(),
          },
        },
      },
      ...errorResponses(ERRORS_OF[`post ${EXPORT_PATH}`]!),
    },
  };
}

/** GET /openapi.json: this document, public. */
function documentOperation(): Json {
  const headers = named('X-Request-Id', 'ETag');
  const publicCache = { required: true, description: '`public, max-age=300` when the deployment has a fixed public URL (then the document is the same for everyone); otherwise `private, max-age=300`, because its server URL is the host the request named.', schema: { type: 'string' } };
  return {
    operationId: 'getOpenApiDocument',
    summary: 'The OpenAPI document',
    description: 'This document (OpenAPI 3.1), which generators read to write clients. Public: no key needed. Revalidate it with `If-None-Match`.',
    tags: ['Reference'],
    security: [],
    responses: {
      '200': {
        description: 'The document, with this deployment as its server.',
        headers: { ...headers, 'Cache-Control': publicCache },
        content: {
          'application/json': {
            schema: {
              type: 'object',
              description: 'An OpenAPI 3.1 document.',
              required: ['openapi', 'info', 'paths'],
              properties: { openapi: { type: 'string', const: '3.1.0' }, info: { type: 'object' }, paths: { type: 'object' } },
              additionalProperties: true,
            },
            example: { openapi: '3.1.0', info: { title: 'Contract Data API', version: changelogVersion() }, paths: {} },
          },
        },
      },
      '304': notModifiedResponse({ ...headers, 'Cache-Control': publicCache }),
      ...errorResponses([400, 405], (status) => (status === 405 ? named('X-Request-Id', 'Allow') : named('X-Request-Id'))),
    },
  };
}

const HEAD_OPERATION_IDS: Record<string, string> = {
  listContracts: 'listContractsHead',
  getContract: 'getContractHead',
  listEvents: 'listEventsHead',
  getEvent: 'getEventHead',
  getCalendarFeed: 'getCalendarFeedHead',
  getOpenApiDocument: 'getOpenApiDocumentHead',
};

/** HEAD of a GET operation: the same answers, headers only. */
function headOperation(get: Json): Json {
  const responses = Object.fromEntries(
    Object.entries(get.responses as Record<string, Json>).map(([status, response]) => {
      const { content: _body, ...rest } = response;
      return [status, rest];
    }),
  );
  return {
    operationId: HEAD_OPERATION_IDS[get.operationId as string],
    summary: `${String(get.summary)} (headers only)`,
    description: 'The status and headers the GET would answer, without a body: to check that a resource exists, whether it changed (`If-None-Match`) or where the rate limit stands. Counts like the GET.',
    tags: get.tags,
    security: get.security,
    ...(get.parameters ? { parameters: get.parameters } : {}),
    responses,
  };
}

export function buildOpenApiDocument(baseUrl: string): Json {
  const doc = generateOpenApiDocument(restRouter, {
    title: 'Contract Data API',
    // Derived from the changelog, so that every entry changes it (server/rest/changelog.ts).
    version: changelogVersion(),
    description: apiDescription(baseUrl),
    baseUrl: `${baseUrl}${API_PREFIX}`,
    securitySchemes: {
      ApiKeyAuth: { type: 'apiKey', in: 'header', name: 'X-API-Key', description: 'An API key from Settings → API Keys. The permissions an operation lists (`contracts:read`, `contracts:export`) are those the key needs.' },
      BearerAuth: { type: 'http', scheme: 'bearer', description: 'The same API key as `Authorization: Bearer <key>`. The permissions an operation lists (`contracts:read`, `contracts:export`) are those the key needs.' },
    },
    defs: { Error: errorEnvelopeSchema },
    paths: { [EXPORT_PATH]: { post: exportOperation() } },
  }) as unknown as Json;

  doc.info = { ...(doc.info as Json), license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' } };
  doc.servers = [{ url: `${baseUrl}${API_PREFIX}`, description: 'This deployment' }];
  doc.tags = [
    { name: 'Contracts', description: 'Contract records and their extracted data.' },
    { name: 'Events', description: 'What happened to the contracts, in order, for copies that stay exact (docs/api-guide.md, "The event list").' },
  ];
  const components = (doc.components ??= {}) as Json;
  components.headers = HEADERS;
  // trpc-to-openapi's own error schemas are replaced by the spec's envelope (Error).
  const schemas = components.schemas as Json;
  for (const name of Object.keys(schemas)) if (name.startsWith('error.')) delete schemas[name];

  // The JSON operations, as trpc-to-openapi wrote them (ids from their procedures' metadata): headers, examples, errors, 304.
  for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, Json>>)) {
    for (const [method, operation] of Object.entries(item)) {
      const key = `${method} ${path}`;
      if (key === `post ${EXPORT_PATH}`) continue;
      const responses = operation.responses as Record<string, Json>;
      for (const status of Object.keys(responses)) if (status !== '200') delete responses[status];
      const permission = PERMISSION_OF[key];
      if (permission) {
        operation.security = securityFor(permission);
        operation['x-required-permission'] = permission;
        operation.description = `${String(operation.description ?? '')}${permissionNote(permission)}`.trim();
      }
      const ok = responses['200']!;
      if (OK_DESCRIPTIONS[key]) ok.description = OK_DESCRIPTIONS[key];
      ok.headers = { ...(ok.headers as Json), ...headersFor(200), ...(key === 'get /contracts' || key === 'get /events' ? named('Link') : {}) };
      const json = (ok.content as Record<string, Json> | undefined)?.['application/json'];
      if (json && OK_EXAMPLES[key]) json.examples = OK_EXAMPLES[key];
      responses['304'] = notModifiedResponse(headersFor(304));
      Object.assign(responses, errorResponses(ERRORS_OF[key] ?? [400, 401, 405, 429, 500, 503]));
    }
  }
  // The calendar feed has no API key, and the document none at all: added whole.
  const calendar = calendarFeedOpenApi({ errorResponses, notModifiedResponse, named });
  Object.assign(doc.paths as Json, calendar.paths, { [DOCUMENT_PATH]: { get: documentOperation() } });
  doc.tags = [...(doc.tags as Json[]), calendar.tag, { name: 'Reference', description: 'The document itself.' }];
  // Before HEAD is added: a HEAD operation takes its GET's parameters and answers as they are then.
  markDeprecations(doc, DEPRECATIONS, baseUrl);
  // HEAD is served wherever GET is (server/rest/router.ts).
  for (const item of Object.values(doc.paths as Record<string, Record<string, Json>>)) {
    if (item.get) item.head = headOperation(item.get);
  }
  addCodeSamples(doc, `${baseUrl}${API_PREFIX}`);
  addWebhooks(doc);
  return doc;
}

let cached: { baseUrl: string; doc: Json } | undefined;

/** The document for a base URL, built once per process. */
export function openApiDocument(baseUrl: string): Json {
  if (cached?.baseUrl !== baseUrl) cached = { baseUrl, doc: buildOpenApiDocument(baseUrl) };
  return cached.doc;
}
