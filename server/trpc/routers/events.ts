import { getEventInput, listEventsInput } from '@/server/events/schemas';
import { getEvent, listEvents } from '@/server/events/service';
import { getEventOutput, listEventsOutput } from '@/server/events/shape';
import { linkTo } from '@/server/http/links';
import { apiKeyProcedure, router } from '../init';

const TAGS = ['Events'];

/** The event list (docs/api-guide.md, "The event list"), under /api/v1 like the contracts. */
export const eventsRouter = router({
  list: apiKeyProcedure('general')
    .meta({
      openapi: {
        method: 'GET',
        path: '/events',
        operationId: 'listEvents',
        tags: TAGS,
        summary: 'List events',
        description:
          'What happened to the contracts the caller may access, oldest first: every create, update (with `changed_fields`), completed extraction and deletion, each as its webhook delivers it (the same `id` as the `webhook-id`). Page with `cursor` (`pagination.next_cursor`, also in `Link: <…>; rel="next"` while more follow); at the end `next_cursor` names the same place, so a poller keeps it and asks again later: nothing that commits meanwhile is skipped, and nothing comes twice. Events are kept `EVENTS_RETENTION_DAYS` (30 days by default); an older cursor answers `410 cursor_expired`. Rate limited as the list.',
        protect: true,
      },
    })
    .input(listEventsInput)
    .output(listEventsOutput)
    .query(async ({ ctx, input }) => {
      const data = await listEvents(ctx.readDb, ctx.caller.scope, input);
      if (data.pagination.has_more) ctx.setHeader('Link', linkTo(ctx, 'next', { cursor: data.pagination.next_cursor, since: undefined }));
      return { success: true as const, data };
    }),

  get: apiKeyProcedure('general')
    .meta({
      openapi: {
        method: 'GET',
        path: '/events/{id}',
        operationId: 'getEvent',
        tags: TAGS,
        summary: 'Get one event',
        description: 'One event by its id, the `webhook-id` of its deliveries: how a receiver fetches one it missed. An event that does not exist, is older than the list keeps, or is about a contract the caller cannot access is a 404.',
        protect: true,
      },
    })
    .input(getEventInput)
    .output(getEventOutput)
    .query(async ({ ctx, input }) => ({ success: true as const, data: { event: await getEvent(ctx.readDb, ctx.caller.scope, input.id) } })),
});
