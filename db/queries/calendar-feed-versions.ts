import { eq, sql } from 'drizzle-orm';
import type { Database } from '../client';
import { calendarFeedVersions } from '../schema';

/** The entity tag a feed last answered with, and when its answer last changed. */
export interface FeedVersion {
  etag: string;
  changedAt: Date;
}

export async function selectFeedVersion(db: Database, tokenId: string): Promise<FeedVersion | undefined> {
  const [row] = await db
    .select({ etag: calendarFeedVersions.etag, changedAt: calendarFeedVersions.changedAt })
    .from(calendarFeedVersions)
    .where(eq(calendarFeedVersions.tokenId, tokenId));
  return row;
}

/**
 * Records that a feed now answers with `etag`, first seen at `now` (a whole second), and
 * returns when its answer last changed. A change moves that time at least one second past
 * the previous one, so that a client whose If-Modified-Since is the previous Last-Modified
 * (whole seconds) never takes a new answer for the one it has. Two instances recording the
 * same change at once agree: the row decides, in one statement.
 */
export async function recordFeedVersion(db: Database, tokenId: string, etag: string, now: Date): Promise<Date> {
  const [row] = await db
    .insert(calendarFeedVersions)
    .values({ tokenId, etag, changedAt: now })
    .onConflictDoUpdate({
      target: calendarFeedVersions.tokenId,
      set: {
        etag: sql`excluded.etag`,
        changedAt: sql`CASE WHEN ${calendarFeedVersions.etag} = excluded.etag THEN ${calendarFeedVersions.changedAt}
          ELSE greatest(excluded.changed_at, ${calendarFeedVersions.changedAt} + interval '1 second') END`,
      },
    })
    .returning({ changedAt: calendarFeedVersions.changedAt });
  return row!.changedAt;
}
