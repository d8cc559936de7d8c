import type { Database } from '@/db/client';
import { accessShape, type CallerScope } from '@/db/queries/access';
import { currentEventPosition, positionBefore, readEventHorizon, selectEventById, selectEventPage } from '@/db/queries/events';
import { AppError } from '@/server/errors';
import type { ListEventsInput } from './schemas';
import { eventUuidOf, toListedEvent, type ListedEventOutput } from './shape';

/**
 * The event list (docs/api-guide.md, "The event list"): a caller's events after a place in
 * the list, oldest first. The cursor is that place (a position: db/queries/events.ts), so
 * a poll that finds nothing answers the same cursor, and one that resumes later misses
 * nothing that committed meanwhile.
 */

const VERSION = 1;
const invalidCursor = () => {
  const message = 'cursor is not a cursor of the event list: pass pagination.next_cursor of a previous page as it is';
  return new AppError('invalid_request', message, [{ param: 'cursor', message }]);
};
export const EXPIRED_MESSAGE =
  'The event list no longer holds the events after this place (they are kept EVENTS_RETENTION_DAYS, 30 days by default). Start again from an export (POST /api/v1/contracts/export), then page the events from now on.';

export function encodeEventCursor(position: number): string {
  return Buffer.from(JSON.stringify([VERSION, position])).toString('base64url');
}

export function decodeEventCursor(text: string): number {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    throw invalidCursor();
  }
  if (!Array.isArray(parsed) || parsed.length !== 2 || parsed[0] !== VERSION || !Number.isSafeInteger(parsed[1]) || (parsed[1] as number) < 0) throw invalidCursor();
  return parsed[1] as number;
}

export interface EventPage {
  events: ListedEventOutput[];
  pagination: { limit: number; next_cursor: string; has_more: boolean };
}

/** Where a request starts: after its cursor's position, after the last event before `since`, or at the oldest retained. */
async function startOf(db: Database, input: ListEventsInput): Promise<number> {
  const horizon = await readEventHorizon(db);
  if (input.cursor !== undefined) {
    const after = decodeEventCursor(input.cursor);
    if (after < horizon.prunedThrough) throw new AppError('cursor_expired', EXPIRED_MESSAGE, [{ param: 'cursor', message: EXPIRED_MESSAGE }]);
    return after;
  }
  if (input.since !== undefined) {
    const since = new Date(input.since);
    if (horizon.prunedUntil && since <= horizon.prunedUntil) throw new AppError('cursor_expired', EXPIRED_MESSAGE, [{ param: 'since', message: EXPIRED_MESSAGE }]);
    return Math.max(await positionBefore(db, since), horizon.prunedThrough);
  }
  return horizon.prunedThrough;
}

export async function listEvents(db: Database, scope: CallerScope, input: ListEventsInput): Promise<EventPage> {
  const after = await startOf(db, input);
  const shape = accessShape(scope, undefined);
  // One more than the page: whether more follow, without a second statement. A caller
  // that reaches no contract (a key whose access shrank to nothing) still reads the events
  // about everyone and its own.
  const rows = await selectEventPage(db, scope, shape, { after, limit: input.limit + 1, ...(input.types ? { types: input.types } : {}) });
  // The page ends at the key's own access event: what follows it was read with the access
  // this request started with, which that event may have changed (committed between the
  // two reads), so the next page reads it again with the access of then.
  const accessChange = rows.findIndex((row) => row.type.startsWith('access.'));
  const page = rows.slice(0, accessChange >= 0 ? Math.min(accessChange + 1, input.limit) : input.limit);
  const last = page.at(-1)?.position ?? after;
  return {
    events: page.map(toListedEvent),
    pagination: { limit: input.limit, next_cursor: encodeEventCursor(last), has_more: rows.length > page.length },
  };
}

export async function getEvent(db: Database, scope: CallerScope, id: string): Promise<ListedEventOutput> {
  const event = await selectEventById(db, scope, eventUuidOf(id));
  if (!event) throw new AppError('not_found', 'No such event: it does not exist, is not about a contract this key may access, or is older than the list keeps.');
  return toListedEvent(event);
}

/**
 * The export's `X-Events-Cursor`: the end of the list now, read before the export's first
 * row. Whatever commits later (and so may be missing from the file, or in it) takes a
 * later position, so the file plus the events from here is the whole story.
 */
export async function eventsCursorNow(db: Database): Promise<string> {
  return encodeEventCursor(await currentEventPosition(db));
}
