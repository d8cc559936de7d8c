import { getDb } from '@/db/client';
import { organizationIdsOf, type ContractDetailRow } from '@/db/queries/contracts';
import { contractsInPages } from '@/server/contracts/service';
import { AppError } from '@/server/errors';
import { isRateLimitExhausted } from '@/server/rate-limit';
import { baseApiHeaders } from '@/server/rest/openapi-handler';
import { enforceRateLimit } from '@/server/rest/rate-limit-hook';
import { clientAddressOf, SHARED_CLIENT_BUCKET } from '@/server/rest/client-address';
import { describeForLog, errorResponse, newRequestId, toAppError } from '@/server/rest/responses';
import { FEED_PATH_PREFIX } from './constants';
import { eventsText, feedFooter, feedHeader, feedSettings } from './events';
import { feedOriginOf, findActiveFeed } from './service';

const PAGE_SIZE = 1000;
const FILE_SUFFIX = '.ics';

// One answer for a file that is not .ics and for a malformed, mistyped, unknown or revoked
// token (or an API key in its place), so the answer says nothing about which tokens exist.
const NOT_FOUND_MESSAGE =
  'No calendar feed at this address. It may have been revoked; create a new one under Settings → Calendar feeds.';

/**
 * GET /api/v1/calendar/{token}.ics: the feed owner's renewal and expiration dates as an
 * iCalendar file, for calendar apps, which cannot send headers, so the token is the file
 * name. A plain route handler (trpc-to-openapi answers only JSON) that streams one page
 * of contracts at a time, so memory stays flat however many contracts the owner can see.
 *
 * `now` is the clock (tests pass a fixed one).
 */
export function createCalendarFeedHandler(options: { now?: () => Date } = {}) {
  const clock = options.now ?? (() => new Date());

  return async function handleCalendarFeedRequest(req: Request): Promise<Response> {
    const requestId = newRequestId();
    const headers = baseApiHeaders(requestId);
    const file = fileNameOf(req.url);
    const isIcs = file !== undefined && file.length > FILE_SUFFIX.length && file.endsWith(FILE_SUFFIX);
    if (req.method !== 'GET') {
      // Nothing is looked up for another method: the file's existence is not its business.
      if (!isIcs) return errorResponse(new AppError('not_found', NOT_FOUND_MESSAGE), requestId, headers);
      headers.set('Allow', 'GET, HEAD');
      return errorResponse(new AppError('method_not_allowed', `${req.method} is not allowed here; use GET.`), requestId, headers);
    }
    try {
      const now = clock();
      const db = await getDb();
      const clientIp = clientAddressOf(req.headers);
      const ctx = { setHeader: (name: string, value: string) => headers.set(name, value) };
      const token = isIcs ? file.slice(0, -FILE_SUFFIX.length) : undefined;
      // Bad tokens count against the client address in the same bucket as bad API keys.
      // Once the address is out of attempts even a correct token gets the 429, so that a
      // lucky guess cannot be told apart from a miss.
      const [blocked, feed] = await Promise.all([isRateLimitExhausted('auth_failure', clientIp), findActiveFeed(db, token, now)]);
      // As for API keys, the shared bucket of unidentified clients never blocks a correct token.
      if (!feed || (blocked && clientIp !== SHARED_CLIENT_BUCKET)) {
        await enforceRateLimit(ctx, 'auth_failure', clientIp, { headers: false });
        throw new AppError('not_found', NOT_FOUND_MESSAGE);
      }

      // Each feed has its own hourly quota, so a leaked address cannot keep the database busy.
      await enforceRateLimit(ctx, 'calendar', feed.feedId, { headers: false });

      // The owner's scope now: a membership removed since the last fetch no longer counts.
      const scope = { userId: feed.userId, organizationIds: await organizationIdsOf(db, feed.userId) };
      const settings = feedSettings(originOf(req), now);
      // Only completed contracts have dates to show (the API's rule for extracted data), and
      // only those with a date in the window are read.
      const pages = contractsInPages(db, scope, { status: 'completed', datesFrom: settings.windowStart }, PAGE_SIZE);
      // The first page is read before answering, so that a database failure is still a
      // JSON error rather than a calendar cut short.
      let pending: IteratorResult<ContractDetailRow[]> | undefined = await pages.next();
      let cancelled = false;
      const encoder = new TextEncoder();
      const stream = new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(encoder.encode(feedHeader()));
        },
        async pull(controller) {
          try {
            // A page may hold no date in the window: read on until there is text to send,
            // because a pull that enqueues nothing is not called again.
            for (;;) {
              const page = pending ?? (await pages.next());
              pending = undefined;
              if (cancelled) return;
              if (page.done) {
                controller.enqueue(encoder.encode(feedFooter()));
                controller.close();
                return;
              }
              const text = eventsText(page.value, settings);
              if (text) {
                controller.enqueue(encoder.encode(text));
                return;
              }
            }
          } catch (error) {
            if (cancelled) return;
            // Headers are sent: an aborted transfer (no END:VCALENDAR) is the honest signal,
            // and calendar apps keep the previous copy instead of dropping events.
            console.error(`[${requestId}] calendar feed failed mid-stream: ${describeForLog(error)}`);
            controller.error(error);
          }
        },
        async cancel() {
          cancelled = true;
          await pages.return(undefined);
        },
      });

      headers.set('Content-Type', 'text/calendar; charset=utf-8');
      headers.set('Content-Disposition', 'inline; filename="contracts.ics"');
      // Private: the URL is a secret, so no shared cache may keep the answer. Five minutes
      // spares the database a client that polls far more often than REFRESH-INTERVAL asks.
      headers.set('Cache-Control', 'private, max-age=300');
      return new Response(stream, { status: 200, headers });
    } catch (error) {
      return errorResponse(toAppError(error, requestId), requestId, headers);
    }
  };
}

export const handleCalendarFeedRequest = createCalendarFeedHandler();

/** The last path segment below /api/v1/calendar/, or undefined for any other shape of path. */
function fileNameOf(url: string): string | undefined {
  const path = new URL(url).pathname;
  if (!path.startsWith(FEED_PATH_PREFIX)) return undefined;
  const file = path.slice(FEED_PATH_PREFIX.length);
  return file.length > 0 && !file.includes('/') ? file : undefined;
}

/** The public origin for links in the feed; the request's own when the headers do not make one. */
function originOf(req: Request): string {
  try {
    return feedOriginOf(req.headers);
  } catch {
    return new URL(req.url).origin;
  }
}
