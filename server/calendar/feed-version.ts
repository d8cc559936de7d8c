import type { Database } from '@/db/client';
import { recordFeedVersion, selectFeedVersion } from '@/db/queries/calendar-feed-versions';

/**
 * A calendar feed's Last-Modified: when its answer last changed. Comparing answers (their
 * entity tags) is the one way to see every change: a deleted contract, an ended
 * membership or a date leaving the window leave no newer updated_at behind. Nothing is
 * written while the answer stays the same.
 */
export async function feedLastModified(db: Database, tokenId: string, etag: string, now: Date): Promise<Date> {
  const known = await selectFeedVersion(db, tokenId);
  if (known?.etag === etag) return known.changedAt;
  // HTTP dates have whole seconds.
  return recordFeedVersion(db, tokenId, etag, new Date(Math.floor(now.getTime() / 1000) * 1000));
}
