import { z } from 'zod';
import type { ListedEvent } from '@/db/queries/events';
import { EVENT_LIST_TYPES } from '@/lib/events';
import { contractDetail } from '@/server/contracts/shape';
import { eventDataOf, messageIdOf } from '@/server/webhooks/message';

/**
 * The event list's outputs: each event as a webhook delivers it (the same `id` as its
 * `webhook-id`, the same `data`), and the page's position in the list.
 */

const deletedContract = z
  .object({
    id: z.string().meta({ description: 'The deleted contract\'s id.' }),
    organization_id: z.string().nullable().meta({ description: 'Its organisation (null: it was a personal contract).' }),
  })
  .meta({ id: 'DeletedContract', description: 'What a contract.deleted event keeps of the contract.' });

export const listedEventSchema = z
  .object({
    id: z.string().meta({ description: 'The event id: the same as the `webhook-id` of its webhook deliveries (`msg_` and 32 hexadecimal digits).' }),
    type: z.enum(EVENT_LIST_TYPES).meta({ description: 'What happened (as the webhook event types).' }),
    created_at: z.string().meta({ description: 'When it happened (ISO 8601, UTC: the start of the writing transaction).' }),
    data: z
      .object({
        contract: z
          .union([contractDetail, deletedContract])
          .optional()
          .meta({
            description:
              'The contract as GET /api/v1/contracts/{id} showed it right after the event (its computed renewal dates on that UTC day); for contract.deleted, its id and organization_id only; absent for contracts.reset and the access events.',
          }),
        changed_fields: z.array(z.string()).optional().meta({ description: 'contract.updated: the paths of the fields that changed (as in the webhook).' }),
        organization_ids: z.array(z.string()).optional().meta({
          description:
            'access.reduced: the organisations whose contracts this key no longer sees (drop the copies whose `organization_id` is one of them); access.expanded: those it now sees (fetch them: the list with `organization_id`, or an export). Possibly empty when only `personal` changed.',
        }),
        personal: z.boolean().optional().meta({
          description: 'access.reduced: true when the key no longer sees its owner\'s personal contracts (`organization_id` null); access.expanded: true when it now does.',
        }),
      })
      .meta({ description: 'As a webhook\'s `data`.' }),
  })
  .meta({
    id: 'Event',
    description:
      'One thing that happened. `contracts.reset` is about every contract: the table was emptied at once (a reload by the pipeline, which no per-contract event describes); a copy starts again from an export. `access.reduced` and `access.expanded` are this key\'s own: what it may see shrank or grew (its owner left or joined an organisation, its access was edited, an organisation removed its access or changed its policy), at the moment it happened; they name the organisations in `data.organization_ids` and the owner\'s personal contracts with `data.personal`.',
  });

const eventPagination = z
  .object({
    limit: z.int().min(1).max(100).meta({ description: 'The page size applied (1 to 100).' }),
    next_cursor: z.string().meta({
      description: 'Where the next page starts: pass it as `cursor`. Never null: at the end of the list it names the same place, so a poller keeps it and asks again later.',
    }),
    has_more: z.boolean().meta({
      description:
        'Whether events follow this page right now (then `Link: <…>; rel="next"` is sent too). A page also ends right after one of the key\'s own access events (`access.reduced`, `access.expanded`), with fewer than `limit` events if need be: the next page is read with the access as that event changed it.',
    }),
  })
  .meta({ id: 'EventPagination' });

export const listEventsOutput = z
  .object({ success: z.literal(true), data: z.object({ events: z.array(listedEventSchema), pagination: eventPagination }) })
  .meta({ id: 'EventList', description: 'A page of the event list, oldest first.' });

export const getEventOutput = z
  .object({ success: z.literal(true), data: z.object({ event: listedEventSchema }) })
  .meta({ id: 'EventResponse', description: 'One event of the list.' });

export type ListedEventOutput = z.output<typeof listedEventSchema>;

export function toListedEvent(event: ListedEvent): ListedEventOutput {
  return {
    id: messageIdOf(event.id),
    type: event.type as ListedEventOutput['type'],
    created_at: event.occurredAt.toISOString(),
    data: eventDataOf({ type: event.type, occurredAt: event.occurredAt, contract: event.contract as Record<string, unknown> | null, extra: event.extra as Record<string, unknown> | null }) as ListedEventOutput['data'],
  };
}

/** The UUID of an event id (msg_ + 32 hex digits, as messageIdOf writes it). */
export function eventUuidOf(messageId: string): string {
  const hex = messageId.slice('msg_'.length);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
