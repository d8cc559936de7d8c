import type { Database } from '@/db/client';
import { pruneEventList } from '@/db/queries/events';

/**
 * The event list's retention (EVENTS_RETENTION_DAYS, default 30), run by the webhook
 * worker with the rest of its pruning: the oldest events in batches of PRUNE_BATCH, one
 * short statement each, at most MAX_BATCHES a run (a backlog waits for the next run),
 * each moving the horizon below which a cursor answers 410 cursor_expired.
 */
export const PRUNE_BATCH = 5000;
const MAX_BATCHES = 20;

/** Removes the list's events that occurred before `before`; returns how many. */
export async function pruneEvents(db: Database, before: Date, until?: number): Promise<number> {
  let total = 0;
  for (let i = 0; i < MAX_BATCHES && (until === undefined || Date.now() < until); i++) {
    const removed = await pruneEventList(db, before, PRUNE_BATCH);
    total += removed;
    if (removed < PRUNE_BATCH) break;
  }
  return total;
}
