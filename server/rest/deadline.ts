import { config } from '@/server/config';
import { AppError } from '@/server/errors';
import { baseApiHeaders } from './openapi-handler';
import { errorResponse, newRequestId } from './responses';

/**
 * An upper bound on how long a REST request waits for its Response. A database that
 * stops answering on a connection already open (a frozen host, a partition) trips none
 * of the other bounds: statement_timeout runs in the server, connect_timeout only covers
 * connecting, and postgres.js has no client-side deadline, so the request would wait for
 * TCP to give up, minutes later. Past the deadline the client gets the API's 503 with
 * Retry-After; the stuck connection frees itself when the database or TCP gives up.
 *
 * The bound covers the time until the handler returns its Response: for the export, the
 * first page. The rest of a streamed body is paced by the client and is not bounded here.
 */

type Handler<A extends unknown[]> = (req: Request, ...rest: A) => Promise<Response>;

export function withRequestDeadline<A extends unknown[]>(
  handler: Handler<A>,
  deadlineMs: () => number = () => config().requestDeadlineMs,
): Handler<A> {
  return async (req, ...rest) => {
    const ms = deadlineMs();
    // Started as a promise whatever happens, so that a synchronous throw is a rejection too.
    const work = Promise.resolve().then(() => handler(req, ...rest));
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<undefined>((resolve) => {
      timer = setTimeout(resolve, ms, undefined);
    });
    try {
      const response = await Promise.race([work, expired]);
      if (response) return response;
    } finally {
      clearTimeout(timer);
    }
    dropLateResult(work);
    const requestId = newRequestId();
    // One line naming the cause, like the database errors of responses.ts: never the request.
    console.error(`[${requestId}] request deadline of ${ms} ms passed: answered 503`);
    return errorResponse(
      new AppError('service_unavailable', 'The service is temporarily unavailable. Retry in a few seconds.'),
      requestId,
      baseApiHeaders(requestId),
    );
  };
}

/**
 * The client has its answer: a Response that arrives later is discarded, its body
 * cancelled so that a stream (the export) stops reading pages and releases its
 * connection. A late failure has been answered already and is not reported twice.
 */
function dropLateResult(work: Promise<Response>): void {
  work.then(
    (late) => late.body?.cancel().catch(() => {}),
    () => {},
  );
}
