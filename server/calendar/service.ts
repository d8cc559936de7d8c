import { afterResponse } from '@/server/after-response';
import type { Database } from '@/db/client';
import { withUserLocked } from '@/db/queries/api-keys';
import {
  countActiveFeeds,
  insertCalendarFeed,
  revokeCalendarFeedRow,
  selectCalendarFeedOf,
  selectCalendarFeedsOf,
  selectFeedByHash,
  touchFeedLastUsed,
} from '@/db/queries/calendar-feeds';
import { AppError } from '@/server/errors';
import { publicOrigin } from '@/server/rest/public-origin';
import { FEED_NAME_MAX_LENGTH, feedUrlOf, MAX_ACTIVE_FEEDS, webcalUrlOf } from './constants';
import { feedHintOf, generateFeedToken, hashFeedToken, isWellFormedFeedToken } from './token-format';

/**
 * Calendar feeds of a user: created on the settings page, read by calendar apps with the
 * token in the URL (they cannot send headers), revoked on the settings page. The token is
 * returned once, inside the feed's URL; only its SHA-256 and a hint are stored.
 */

export type CalendarFeedStatus = 'active' | 'revoked';

export interface CalendarFeedSummary {
  id: string;
  name: string;
  hint: string;
  createdAt: Date;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
  status: CalendarFeedStatus;
}

type FeedRow = Omit<CalendarFeedSummary, 'status'>;

const summaryOf = (row: FeedRow): CalendarFeedSummary => ({ ...row, status: row.revokedAt ? 'revoked' : 'active' });

export async function listCalendarFeeds(db: Database, userId: string): Promise<CalendarFeedSummary[]> {
  return (await selectCalendarFeedsOf(db, userId)).map(summaryOf);
}

/**
 * The origin feed URLs are written with: the public origin the request came through, as
 * the API reference page shows it. Header values are the client's word, so one that does
 * not make a URL is refused rather than written into a link.
 */
export function feedOriginOf(headers: Headers): string {
  try {
    return new URL(publicOrigin(headers)).origin;
  } catch {
    throw new AppError('invalid_request', 'The request does not name a valid host, so no feed address can be written.');
  }
}

/** Creates a feed and returns its URL: the only moment the token exists in plain text. */
export async function createCalendarFeed(
  db: Database,
  userId: string,
  input: { name: string },
  origin: string,
  now = new Date(),
): Promise<{ url: string; webcalUrl: string; feed: CalendarFeedSummary }> {
  const name = input.name.trim();
  if (name.length < 1 || name.length > FEED_NAME_MAX_LENGTH) {
    throw new AppError('invalid_request', `name must be 1 to ${FEED_NAME_MAX_LENGTH} characters`, [
      { param: 'name', message: `Must be 1 to ${FEED_NAME_MAX_LENGTH} characters.` },
    ]);
  }
  const token = generateFeedToken();
  // Under the same per-user lock as API keys, so concurrent creations cannot overshoot the limit.
  const row = await withUserLocked(db, userId, async (tx) => {
    if ((await countActiveFeeds(tx, userId)) >= MAX_ACTIVE_FEEDS) {
      throw new AppError(
        'conflict',
        `You already have ${MAX_ACTIVE_FEEDS} active calendar feeds, the most allowed. Revoke one you no longer use first.`,
      );
    }
    return insertCalendarFeed(tx, { userId, name, tokenHash: hashFeedToken(token), hint: feedHintOf(token), createdAt: now });
  });
  const url = feedUrlOf(origin, token);
  return { url, webcalUrl: webcalUrlOf(url), feed: summaryOf(row) };
}

/** Revokes one of the user's own feeds (idempotent). Another user's feed is "not found". */
export async function revokeCalendarFeed(db: Database, userId: string, feedId: string, now = new Date()): Promise<CalendarFeedSummary> {
  await revokeCalendarFeedRow(db, userId, feedId, now);
  const row = await selectCalendarFeedOf(db, userId, feedId);
  if (!row) throw new AppError('not_found', 'No such calendar feed.');
  return summaryOf(row);
}

/** Who an active feed belongs to. */
export interface FeedPrincipal {
  feedId: string;
  userId: string;
}

const LAST_USED_INTERVAL_MS = 60_000;

/**
 * The feed a presented token opens, or undefined for every kind of bad token alike
 * (malformed, wrong checksum, an API key, unknown, revoked). No cache: a feed is fetched
 * every few hours, and a revocation must hold from the next request on.
 */
export async function findActiveFeed(db: Database, presented: string | undefined, now = new Date()): Promise<FeedPrincipal | undefined> {
  if (!presented || !isWellFormedFeedToken(presented)) return undefined;
  const row = await selectFeedByHash(db, hashFeedToken(presented));
  if (!row || row.revokedAt) return undefined;
  if (!row.lastUsedAt || now.getTime() - row.lastUsedAt.getTime() >= LAST_USED_INTERVAL_MS) recordUse(db, row.id, now);
  return { feedId: row.id, userId: row.userId };
}

/** Writes last_used_at (at most once a minute, checked in SQL too) without making the response wait. */
function recordUse(db: Database, feedId: string, now: Date): void {
  afterResponse(
    () => touchFeedLastUsed(db, feedId, now, LAST_USED_INTERVAL_MS),
    (reason) => `calendar-feeds: could not record last use of feed ${feedId} (${reason})`,
  );
}
