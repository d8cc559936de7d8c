import { feedNoticeReminderDays } from '@/db/queries/tokens';
import { createHash } from 'node:crypto';
import type { ContractDetailRow } from '@/db/queries/contracts/columns';
import { FEED_FILE_SUFFIX, FEED_PATH_PREFIX } from '@/lib/calendar';
import { EXTRACTED_DATA_STATUS } from '@/lib/contracts';
import { authenticate, type Credential } from '@/server/access/authenticate';
import { eventsText, feedFooter, feedHeader, feedSettings, type FeedSettings } from '@/server/calendar/events';
import { feedLastModified } from '@/server/calendar/feed-version';
import { contractsInPages } from '@/server/contracts/service';
import { AppError } from '@/server/errors';
import { ifNoneMatchOf, matchesAny, notModified, weakEtagOfDigest } from '@/server/http/conditional';
import type { RequestContext } from '@/server/http/context';
import { pagedStream } from '@/server/http/paged-stream';
import { publicOrigin } from '@/server/http/public-origin';
import { rejectQueryParameters } from '@/server/http/query';
import { textResponse } from '@/server/http/responses';

const PAGE_SIZE = 1000;

// One answer for a file that is not .ics and for a malformed, mistyped, unknown or revoked
// token (or an API key in its place), so the answer says nothing about which tokens exist.
const NOT_FOUND_MESSAGE = 'No calendar feed at this address. It may have been revoked; create a new one under Settings → Calendar feeds.';
export const feedNotFound = () => new AppError('not_found', NOT_FOUND_MESSAGE);

/**
 * GET /api/v1/calendar/{token}.ics: the feed owner's renewal and expiration dates as an
 * iCalendar file, for calendar apps. They cannot send headers, so the token is the file
 * name; it is checked like an API key (the same failed-attempt limit per client address)
 * and has an hourly quota of its own, so a leaked address cannot keep the database busy.
 *
 * Calendar apps poll, so the feed carries both validators they send back: an ETag (from
 * the calendar's text, for If-None-Match) and a Last-Modified (when that text last
 * changed, for clients that revalidate by date, as Apple's do). To know either, the
 * whole calendar is rendered before the answer starts; it is kept in memory up to
 * FEED_BUFFER.limit characters, and a larger one is read again to be streamed.
 * A 304 still counts against the feed's quota: proving that nothing changed costs the
 * same queries as the answer itself.
 */
export async function serveCalendarFeed(req: Request, ctx: RequestContext, responseHeaders: Headers): Promise<Response> {
  const caller = await authenticate(ctx, feedCredential(req.url));
  rejectQueryParameters(req.url, [], 'The calendar feed takes no query parameters: its address is the one shown when it was created.');
  const now = new Date();
  const settings = feedSettings(originOf(req), now, await feedNoticeReminderDays(ctx.db, caller.tokenId));
  // Only completed contracts have dates to show (the API's rule for extracted data), and
  // only those with a date in the window are read.
  const read = () => contractsInPages(ctx.readDb, caller.scope, { status: EXTRACTED_DATA_STATUS, datesFrom: settings.windowStart, today: settings.today }, PAGE_SIZE);
  // Read before answering, so that a database failure is still a JSON error rather than
  // a calendar cut short.
  const rendered = await renderFeed(read(), settings);
  const lastModified = await feedLastModified(ctx.db, caller.tokenId, rendered.etag, now);

  responseHeaders.set('Content-Type', 'text/calendar; charset=utf-8');
  responseHeaders.set('Content-Disposition', 'inline; filename="contracts.ics"');
  // Private: the URL is a secret, so no shared cache may keep the answer. Five minutes
  // spares the database a client that polls far more often than REFRESH-INTERVAL asks.
  responseHeaders.set('Cache-Control', 'private, max-age=300');
  responseHeaders.set('ETag', rendered.etag);
  responseHeaders.set('Last-Modified', lastModified.toUTCString());
  if (isNotModified(req.headers, rendered.etag, lastModified)) return notModified(responseHeaders);
  if (rendered.text !== undefined) return textResponse(rendered.text, 200, responseHeaders);

  // Too large to keep: read again and stream (after the headers, an aborted transfer with
  // no END:VCALENDAR is the honest signal of a failure: calendar apps keep their copy).
  // Should the data change in between, the ETag names the older text, so the next poll
  // gets the new one in full: never the reverse.
  const pages = read();
  const stream = pagedStream({
    first: await pages.next(),
    pages,
    head: feedHeader(),
    render: (rows) => eventsText(rows, settings),
    tail: feedFooter(),
    label: 'calendar feed',
    requestId: ctx.requestId,
  });
  return new Response(stream, { status: 200, headers: responseHeaders });
}

/**
 * How much calendar text (characters) is kept to answer without reading again: about
 * 20,000 events. Tests lower it to take the other path.
 */
export const FEED_BUFFER = { limit: 8_000_000 };

/** The calendar's weak ETag, and its text when it is at most FEED_BUFFER.limit characters. */
async function renderFeed(pages: AsyncGenerator<ContractDetailRow[]>, settings: FeedSettings): Promise<{ etag: string; text?: string }> {
  const hash = createHash('sha256');
  let parts: string[] | undefined = [];
  let size = 0;
  const add = (text: string) => {
    hash.update(text);
    size += text.length;
    if (parts && size > FEED_BUFFER.limit) parts = undefined;
    parts?.push(text);
  };
  add(feedHeader());
  for await (const rows of pages) add(eventsText(rows, settings));
  add(feedFooter());
  return { etag: weakEtagOfDigest(hash.digest()), ...(parts ? { text: parts.join('') } : {}) };
}

/**
 * RFC 9110 13.1.2 and 13.1.3: If-None-Match decides when it is sent; only without it is
 * If-Modified-Since read (whole seconds; an unreadable date is ignored).
 */
function isNotModified(headers: Headers, etag: string, lastModified: Date): boolean {
  const ifNoneMatch = ifNoneMatchOf(headers);
  if (ifNoneMatch !== undefined) return matchesAny(ifNoneMatch, etag);
  const since = Date.parse(headers.get('if-modified-since') ?? '');
  return !Number.isNaN(since) && lastModified.getTime() <= since;
}

/** The token of a feed's file name `<token>.ics`; undefined for any other path. */
function feedTokenOf(url: string): string | undefined {
  const path = new URL(url).pathname;
  if (!path.startsWith(FEED_PATH_PREFIX)) return undefined;
  const file = path.slice(FEED_PATH_PREFIX.length);
  const named = file.length > FEED_FILE_SUFFIX.length && file.endsWith(FEED_FILE_SUFFIX) && !file.includes('/');
  return named ? file.slice(0, -FEED_FILE_SUFFIX.length) : undefined;
}

/** A feed file's token, checked like an API key; a path that names no feed file presents none. */
function feedCredential(url: string): Credential {
  return { kind: 'calendar_feed', presented: feedTokenOf(url), bucket: 'calendar', rateLimitHeaders: false, refusal: feedNotFound };
}

/** Whether a path below /api/v1/calendar/ names a feed file (other methods get a 405 there, a 404 elsewhere). */
export const isFeedFile = (url: string): boolean => feedTokenOf(url) !== undefined;

/** The public origin for links in the feed; the request's own when the headers do not make one. */
function originOf(req: Request): string {
  try {
    return new URL(publicOrigin(req.headers)).origin;
  } catch {
    return new URL(req.url).origin;
  }
}
