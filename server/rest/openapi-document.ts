import { generateOpenApiDocument } from 'trpc-to-openapi';
import { calendarFeedOpenApi } from '@/server/calendar/openapi';
import { errorEnvelope, EXPORT_COLUMNS, exportContractsBody } from '@/server/contracts/schemas';
import { restRouter } from '@/server/trpc/root';
import { API_PREFIX, EXPORT_PATH } from './paths';

/**
 * The OpenAPI 3.1 document, generated from the same zod schemas that validate requests
 * and responses. trpc-to-openapi writes the JSON operations; the export operation, the
 * error envelope and the response headers are added here, in one pass.
 */

type Json = Record<string, unknown>;

const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: 'Malformed request: the message and `details` name the parameter.',
  401: 'Missing, malformed, unknown, expired or revoked API key (one answer for all).',
  403: 'The caller is not a member of the organisation named in `organization_id`.',
  404: 'The contract does not exist or the caller cannot access it.',
  429: 'Rate limit exceeded; retry after `Retry-After` seconds.',
  500: 'Failure inside the service; quote `request_id` to support.',
  503: 'The database is temporarily unavailable; retry after `Retry-After` seconds.',
};

// Which errors each operation can answer, by "METHOD path".
const ERRORS_OF: Record<string, number[]> = {
  [`get /contracts`]: [400, 401, 403, 429, 500, 503],
  [`get /contracts/{id}`]: [400, 401, 404, 429, 500, 503],
  [`post ${EXPORT_PATH}`]: [400, 401, 403, 429, 500, 503],
};

const HEADERS: Json = {
  'X-Request-Id': { description: 'Identifier of this request, also in error bodies.', schema: { type: 'string' } },
  'X-RateLimit-Limit': { description: 'Requests allowed in the current window for this key and bucket.', schema: { type: 'integer' } },
  'X-RateLimit-Remaining': { description: 'Requests left in the current window.', schema: { type: 'integer', minimum: 0 } },
  'X-RateLimit-Reset': { description: 'Unix time (seconds) at which the window frees capacity again.', schema: { type: 'integer' } },
  'RateLimit-Policy': { description: 'IETF draft header (draft-ietf-httpapi-ratelimit-headers-11): the quota policy, for example `"general";q=60;w=60`.', schema: { type: 'string' } },
  RateLimit: { description: 'IETF draft header: the current quota state, for example `"general";r=12;t=37` (remaining, seconds to reset).', schema: { type: 'string' } },
  'Retry-After': { description: 'Seconds to wait before retrying (whole seconds, at least 1).', schema: { type: 'integer', minimum: 1 } },
};

const ref = (name: string) => ({ $ref: `#/components/headers/${name}` });
const RATE_HEADERS = ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset', 'RateLimit-Policy', 'RateLimit'];

function headersFor(status: number): Json {
  const names = ['X-Request-Id'];
  if (status === 200 || status === 400 || status === 403 || status === 404) names.push(...RATE_HEADERS);
  if (status === 429) names.push(...RATE_HEADERS, 'Retry-After');
  if (status === 503) names.push('Retry-After');
  return Object.fromEntries(names.map((n) => [n, ref(n)]));
}

function errorResponses(statuses: number[]): Json {
  return Object.fromEntries(
    statuses.map((status) => [
      String(status),
      {
        description: ERROR_DESCRIPTIONS[status],
        headers: headersFor(status),
        content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
      },
    ]),
  );
}

export function buildOpenApiDocument(baseUrl: string): Json {
  const doc = generateOpenApiDocument(restRouter, {
    title: 'Contract Data API',
    version: '1.0.0',
    description:
      'Read-only access to the contracts you can see in the contract renewal service: your personal contracts and those of your organisations. Authenticate with the `X-API-Key` header (create a key under Settings → API Keys). Rate limits: 60 requests per minute per key for list and get-one, 10 exports per hour per key.',
    baseUrl: `${baseUrl}${API_PREFIX}`,
    securitySchemes: {
      ApiKeyAuth: { type: 'apiKey', in: 'header', name: 'X-API-Key', description: 'An API key from Settings → API Keys.' },
    },
    defs: { Error: errorEnvelope },
    paths: {
      [EXPORT_PATH]: {
        post: {
          operationId: 'contracts-export',
          summary: 'Export contracts as CSV',
          description: `Every matching contract as RFC 4180 CSV with a header row, in list order (or the body's \`sort\`). Columns: ${EXPORT_COLUMNS.join(', ')}, or the body's \`columns\` in their order. Null values are empty cells; text cells that a spreadsheet would run as a formula are prefixed with an apostrophe. \`bom: true\` starts the file with a UTF-8 byte order mark for Excel. The body takes the list's filters with JSON types (numbers, booleans) and is optional; it is read as JSON whatever its Content-Type. Rate limited separately: 10 exports per hour per key.`,
          tags: ['Contracts'],
          security: [{ ApiKeyAuth: [] }],
          requestBody: {
            required: false,
            content: { 'application/json': { schema: exportContractsBody } },
          },
          responses: {
            '200': {
              description: 'The CSV file (attachment named contracts-YYYY-MM-DD.csv).',
              headers: {
                'Content-Disposition': {
                  description: 'attachment; filename="contracts-YYYY-MM-DD.csv"',
                  schema: { type: 'string' },
                },
              },
              content: { 'text/csv': { schema: { type: 'string' } } },
            },
          },
        },
      },
    },
  }) as unknown as Json;

  doc.info = { ...(doc.info as Json), license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' } };
  doc.servers = [{ url: `${baseUrl}${API_PREFIX}`, description: 'This deployment' }];
  doc.tags = [{ name: 'Contracts', description: 'Contract records and their extracted data.' }];
  const components = (doc.components ??= {}) as Json;
  components.headers = HEADERS;
  // trpc-to-openapi's own error schemas are replaced by the spec's envelope (Error).
  const schemas = components.schemas as Json;
  for (const name of Object.keys(schemas)) if (name.startsWith('error.')) delete schemas[name];

  for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, Json>>)) {
    for (const [method, operation] of Object.entries(item)) {
      const key = `${method} ${path}`;
      const responses = operation.responses as Record<string, Json>;
      for (const status of Object.keys(responses)) if (status !== '200') delete responses[status];
      const ok = responses['200']!;
      ok.headers = { ...(ok.headers as Json), ...headersFor(200) };
      Object.assign(responses, errorResponses(ERRORS_OF[key] ?? [400, 401, 429, 500]));
    }
  }
  // The calendar feed has no API key: it is added whole, after the pass above.
  const calendar = calendarFeedOpenApi({ errorResponses });
  Object.assign(doc.paths as Json, calendar.paths);
  doc.tags = [...(doc.tags as Json[]), calendar.tag];
  return doc;
}

let cached: { baseUrl: string; doc: Json } | undefined;

/** The document for a base URL, built once per process. */
export function openApiDocument(baseUrl: string): Json {
  if (cached?.baseUrl !== baseUrl) cached = { baseUrl, doc: buildOpenApiDocument(baseUrl) };
  return cached.doc;
}
