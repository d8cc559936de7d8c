/**
 * The event list's vocabulary (GET /api/v1/events): the types it carries. The contract
 * events are the webhooks' (lib/webhooks.ts), recorded for every change whether or not an
 * endpoint exists; an endpoint's `*_upcoming` events are the endpoint's own (its offsets),
 * not the list's. `contracts.reset` is the list's own: a TRUNCATE of the contracts, about
 * every tenant, after which a copy starts again from an export. `access.reduced` and
 * `access.expanded` are one API key's own: what it may see shrank or grew
 * (server/access/access-events.ts).
 */
export const EVENT_LIST_TYPES = [
  'contract.created',
  'contract.updated',
  'contract.deleted',
  'contract.extraction_completed',
  'contracts.reset',
  'access.reduced',
  'access.expanded',
] as const;
export type EventListType = (typeof EVENT_LIST_TYPES)[number];

/** Days an event stays in the list by default (EVENTS_RETENTION_DAYS). */
export const DEFAULT_EVENTS_RETENTION_DAYS = 30;
