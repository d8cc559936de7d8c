import { FEED_WINDOW_DAYS } from './constants';

type Json = Record<string, unknown>;

/** Below /api/v1, as the document writes paths. */
export const CALENDAR_FEED_PATH = '/calendar/{token}.ics';

const requestIdHeader = { 'X-Request-Id': { $ref: '#/components/headers/X-Request-Id' } };

/**
 * The calendar feed's part of the OpenAPI document (merged in server/rest/openapi-document.ts).
 * It is written whole here rather than passed through the document's pass over the API-key
 * operations: the feed has no API key, so its 200 and 404 carry no rate-limit headers;
 * its 429 (too many bad tokens from one address) does, like any 429.
 */
export function calendarFeedOpenApi(helpers: { errorResponses(statuses: number[]): Json }): { paths: Json; tag: Json } {
  const errors = helpers.errorResponses([404, 429, 500, 503]);
  return {
    tag: { name: 'Calendar', description: 'Renewal and expiration dates as a calendar subscription.' },
    paths: {
      [CALENDAR_FEED_PATH]: {
        get: {
          operationId: 'calendar-feed',
          summary: 'Calendar feed of renewal and expiration dates',
          description: `An iCalendar file (RFC 5545) for calendar apps: one all-day event per expiration date and per renewal date of the feed owner's completed contracts (personal and of their organisations at the time of the request), from ${FEED_WINDOW_DAYS} days before today (UTC) onwards, each linking back to the contract. Calendar apps cannot send headers, so the feed is opened by the token in its address instead of an API key: a separate, revocable token created under Settings → Calendar feeds, shown once. Anyone with the address can read these dates. Subscribe with the https address or the same address with the webcal scheme.`,
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
              description: 'The calendar, streamed.',
              headers: {
                ...requestIdHeader,
                'Cache-Control': { description: '`private, max-age=300`: the address is a secret, so no shared cache keeps it.', schema: { type: 'string' } },
                'Content-Disposition': { description: '`inline; filename="contracts.ics"`', schema: { type: 'string' } },
              },
              content: { 'text/calendar': { schema: { type: 'string' } } },
            },
            ...errors,
            '404': {
              ...(errors['404'] as Json),
              description:
                'No active feed at this address: a malformed, unknown or revoked token, an API key in its place, or a file name without `.ics` (one answer for all).',
              headers: requestIdHeader,
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
