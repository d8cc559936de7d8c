import { z } from 'zod';
import { EVENT_LIST_TYPES } from '@/lib/events';
import { cursorParam, integerParam, paramError, querySchema, timestampParam } from '@/server/contracts/schemas';

/**
 * The event list's inputs (GET /api/v1/events, GET /api/v1/events/{id}): the single source
 * of their validation and of their part of the OpenAPI document. Outputs: ./shape.ts.
 */

const typesExpectation = `must be a comma-separated list of: ${EVENT_LIST_TYPES.join(', ')} (no spaces)`;
const TYPE_NAME = EVENT_LIST_TYPES.map((type) => type.replaceAll('.', '\\.')).join('|');
/** The same pattern in the document: what it allows is exactly what the API takes. */
const TYPES_PATTERN = new RegExp(`^(?:${TYPE_NAME})(?:,(?:${TYPE_NAME}))*$`);
const typesParam = z
  .string({ error: paramError('types', typesExpectation) })
  .max(500, `types ${typesExpectation}`)
  .regex(TYPES_PATTERN, `types ${typesExpectation}`)
  .transform((text) => [...new Set(text.split(','))])
  .meta({
    description: `Only events of these types, comma-separated (${EVENT_LIST_TYPES.join(', ')}). Default: every type. A cursor stays valid with other types: it names a place in the list, not a query.`,
    override: { type: 'string', pattern: TYPES_PATTERN.source, maxLength: 500, example: 'contract.updated,contract.deleted' },
  });

const eventCursorParam = cursorParam
  .meta({
    description:
      'Continue after the previous page: its `pagination.next_cursor` (opaque; also in `Link: <…>; rel="next"`). Keep the last one you processed: the next poll starts there, and misses nothing that committed meanwhile. Without it (and without `since`) the list starts at the oldest event retained. Older than the retention: `410` with code `cursor_expired`.',
  });

export const listEventsInput = querySchema({
  limit: integerParam('limit', { min: 1, max: 100, default: 50 }).meta({ description: 'Events per page (1 to 100).' }),
  cursor: eventCursorParam.optional(),
  types: typesParam.optional(),
  since: timestampParam('since')
    .meta({
      description:
        'Start at the first event that happened at or after this instant, instead of a cursor (not both). An instant is not an exact place in the list (transactions commit out of order): start once with `since`, then page with the cursor. Older than the retention: `410` with code `cursor_expired`.',
    })
    .optional(),
}).superRefine((input, ctx) => {
  if (input.cursor !== undefined && input.since !== undefined) {
    ctx.addIssue({ code: 'custom', path: ['since'], message: 'since and cursor are two places to start: give one of them' });
  }
});
export type ListEventsInput = z.output<typeof listEventsInput>;

const EVENT_ID = /^msg_[0-9a-f]{32}$/;
export const getEventInput = querySchema(
  {
    id: z
      .string({ error: paramError('id', 'must be an event id (msg_ and 32 hexadecimal digits)') })
      .regex(EVENT_ID, 'id must be an event id (msg_ and 32 hexadecimal digits, as in webhook-id)')
      .meta({ description: 'The event id: the `id` of a listed event, or the `webhook-id` header of a webhook delivery.', override: { type: 'string', pattern: EVENT_ID.source, example: 'msg_2f0c5b3e8a1d4c6e9b7a0d1e2f3a4b5c' } }),
  },
  ['id'],
);
