import { DEFAULT_NOTICE_REMINDER_DAYS, FEED_WINDOW_DAYS } from '@/lib/calendar';
import { CALENDAR_ERROR_EXAMPLES, icsExample } from './openapi-examples';
import { CALENDAR_FEED_PATH } from '@/server/http/api-paths';

type Json = Record<string, unknown>;

const ERROR_SCHEMA = { $ref: '#/components/schemas/Error' };

interface Helpers {
  errorResponses(statuses: number[], headers?: (status: number) => Json): Json;
  notModifiedResponse(headers: Json): Json;
  named(...names: string[]): Json;
}

/**
 * The calendar feed's part of the OpenAPI document (merged in ./openapi-document.ts).
 * It is written whole here rather than passed through the document's pass over the API-key
 * operations: the feed has no API key, so its answers carry no rate-limit headers and no
 * WWW-Authenticate; its 429 (the feed's hourly quota, or too many bad tokens from one
 * address) does carry them, like any 429.
 */
export function calendarFeedOpenApi({ errorResponses, notModifiedResponse, named }: Helpers): { paths: Json; tag: Json } {
  const headersOf = (status: number): Json => {
    if (status === 405) return named('X-Request-Id', 'Allow');
    if (status === 429) return named('X-Request-Id', 'X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset', 'RateLimit-Policy', 'RateLimit', 'Retry-After');
    if (status === 503) return named('X-Request-Id', 'Retry-After');
    return named('X-Request-Id');
  };
  const errors = errorResponses([400, 404, 405, 429, 500, 503], headersOf);
  const cacheControl = { required: true, description: '`private, max-age=300`: the address is a secret, so no shared cache keeps it.', schema: { type: 'string' } };
  const validators = { ...named('X-Request-Id', 'ETag', 'Last-Modified'), 'Cache-Control': cacheControl };
  return {
    tag: { name: 'Calendar', description: 'Renewal and expiration dates as a calendar subscription.' },
    paths: {
      [CALENDAR_FEED_PATH]: {
        get: {
          operationId: 'getCalendarFeed',
          summary: 'Calendar feed of renewal, expiration and notice dates',
          description: `An iCalendar file (RFC 5545) for calendar apps: one all-day event per expiration date, per next renewal (\`next_renewal_date\`: an auto-renewing contract at its next term) and per notice deadline (\`notice_deadline\`, "Give notice by: <title>", with what the notice stops in its description and a reminder the days before it that the feed's owner chose when creating it, ${DEFAULT_NOTICE_REMINDER_DAYS} by default) of the feed owner's completed contracts (personal and of their organisations at the time of the request), from ${FEED_WINDOW_DAYS} days before today (UTC) onwards, each linking back to the contract. Event UIDs (\`<contract id>-renewal@contract-data-api\`, \`-expiration\`, \`-notice\`) do not depend on the address the feed is read through, and stay the same when an evergreen contract moves to its next term, so an app updates its events rather than doubling them. Calendar apps cannot send headers, so the feed is opened by the token in its address instead of an API key: a separate, revocable token created under Settings → Calendar feeds, shown once. Anyone with the address can read these dates. Subscribe with the https address or the same address with the webcal scheme. Calendar apps poll: the answer carries \`ETag\` and \`Last-Modified\`, and \`If-None-Match\` (or, without it, \`If-Modified-Since\`) gets \`304\` while nothing changed; every read, 304 or not, counts against the feed's hourly quota. No query parameters.`,
          tags: ['Calendar'],
          security: [],
          parameters: [
            {
              name: 'token',
              in: 'path',
              required: true,
              description: 'The feed token (`cdcal_…`), part of the address shown once when the feed was created. Not an API key.',
              schema: { type: 'string' },
            },
          ],
          responses: {
            '200': {
              description: 'The calendar.',
              headers: {
                ...validators,
                'Content-Disposition': { required: true, description: '`inline; filename="contracts.ics"`', schema: { type: 'string' } },
              },
              content: {
                'text/calendar': {
                  schema: { type: 'string', description: 'RFC 5545, lines end with CRLF and are folded at 75 octets.' },
                  example: icsExample(),
                },
              },
            },
            '304': notModifiedResponse(validators),
            ...errors,
            '404': {
              ...(errors['404'] as Json),
              description:
                'No active feed at this address: a malformed, unknown or revoked token, an API key in its place, or a file name without `.ics` (one answer for all).',
              content: { 'application/json': { schema: ERROR_SCHEMA, examples: CALENDAR_ERROR_EXAMPLES[404] } },
            },
            '429': {
              ...(errors['429'] as Json),
              description:
                'This feed was read more than its hourly quota (60 by default: calendar apps poll every few hours), or too many requests with bad feed tokens or API keys came from this address; retry after `Retry-After` seconds.',
            },
          },
        },
      },
    },
  };
}
