import { and, desc, eq, isNull, lte, or, sql } from 'drizzle-orm';
import { runStatement, type Database, type Statement } from '../client';
import { calendarFeeds } from '../schema';

/** What the settings page lists: never the token hash. */
export const calendarFeedListColumns = {
  id: calendarFeeds.id,
  name: calendarFeeds.name,
  hint: calendarFeeds.hint,
  createdAt: calendarFeeds.createdAt,
  lastUsedAt: calendarFeeds.lastUsedAt,
  revokedAt: calendarFeeds.revokedAt,
};

export function selectCalendarFeedsOf(db: Database, userId: string) {
  return db
    .select(calendarFeedListColumns)
    .from(calendarFeeds)
    .where(eq(calendarFeeds.userId, userId))
    .orderBy(desc(calendarFeeds.createdAt), desc(calendarFeeds.id));
}

/** One of the user's feeds; another user's feed is not found. */
export async function selectCalendarFeedOf(db: Database, userId: string, feedId: string) {
  const [row] = await db
    .select(calendarFeedListColumns)
    .from(calendarFeeds)
    .where(and(eq(calendarFeeds.id, feedId), eq(calendarFeeds.userId, userId)));
  return row;
}

export async function countActiveFeeds(db: Database, userId: string): Promise<number> {
  const [row] = await db
    .select({ n: sql<number>`count(*)::int` })
    .from(calendarFeeds)
    .where(and(eq(calendarFeeds.userId, userId), isNull(calendarFeeds.revokedAt)));
  return Number(row?.n ?? 0);
}

export async function insertCalendarFeed(
  db: Database,
  values: { userId: string; name: string; tokenHash: string; hint: string; createdAt: Date },
) {
  const [row] = await db.insert(calendarFeeds).values(values).returning(calendarFeedListColumns);
  return row!;
}

/** Revokes one of the user's feeds; a feed already revoked keeps its first revocation time. */
export async function revokeCalendarFeedRow(db: Database, userId: string, feedId: string, now: Date): Promise<void> {
  await db
    .update(calendarFeeds)
    .set({ revokedAt: now })
    .where(and(eq(calendarFeeds.id, feedId), eq(calendarFeeds.userId, userId), isNull(calendarFeeds.revokedAt)));
}

/** What serving a feed needs, found by the token's hash (the unique index on token_hash). */
export function feedByHashStatement(tokenHash: string) {
  return {
    name: 'calendar_feed_by_hash',
    build: (db: Database) =>
      db
        .select({
          id: calendarFeeds.id,
          userId: calendarFeeds.userId,
          revokedAt: calendarFeeds.revokedAt,
          lastUsedAt: calendarFeeds.lastUsedAt,
        })
        .from(calendarFeeds)
        .where(eq(calendarFeeds.tokenHash, sql.placeholder('tokenHash')))
        .limit(1),
    values: { tokenHash },
  } satisfies Statement<unknown>;
}

export async function selectFeedByHash(db: Database, tokenHash: string) {
  const [row] = await runStatement(db, feedByHashStatement(tokenHash));
  return row;
}

/**
 * Sets last_used_at to `now` unless it was set less than `minIntervalMs` before: the
 * condition is in the statement, so concurrent reads from several instances write at most
 * once per interval between them.
 */
export async function touchFeedLastUsed(db: Database, feedId: string, now: Date, minIntervalMs: number): Promise<void> {
  await db
    .update(calendarFeeds)
    .set({ lastUsedAt: now })
    .where(
      and(
        eq(calendarFeeds.id, feedId),
        or(isNull(calendarFeeds.lastUsedAt), lte(calendarFeeds.lastUsedAt, new Date(now.getTime() - minIntervalMs))),
      ),
    );
}
