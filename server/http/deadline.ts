import { config } from '@/server/config';
import { AppError, UNAVAILABLE_MESSAGE } from '@/server/errors';
import { errorResponse } from './responses';

/**
 * An upper bound on how long a request of the API waits for its Response. A database that
 * stops answering on a connection already open (a frozen host, a partition) trips none
 * of the other bounds: statement_timeout runs in the server, connect_timeout only covers
 * connecting, and postgres.js has no client-side deadline, so the request would wait for
 * TCP to give up, minutes later. Past the deadline the client gets the API's 503 with
 * Retry-After; the stuck connection frees itself when the database or TCP gives up.
 *
 * The bound covers the time until the handler returns its Response: for the export and
 * the calendar feed, the first page. The rest of a streamed body is paced by the client.
 */
export async function withinDeadline(
  work: () => Promise<Response>,
  requestId: string,
  ms: number = config().requestDeadlineMs,
  /** The answer past the deadline: the API's 503 envelope unless the transport has its own (an HTML page). */
  answerExpired: (error: AppError) => Response = (error) => errorResponse(error, requestId),
): Promise<Response> {
  // Started as a promise whatever happens, so that a synchronous throw is a rejection too.
  const response = Promise.resolve().then(work);
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<undefined>((resolve) => {
    timer = setTimeout(resolve, ms, undefined);
  });
  try {
    const answer = await Promise.race([response, expired]);
    if (answer) return answer;
  } finally {
    clearTimeout(timer);
  }
  dropLateResult(response);
  // One line naming the cause, under the request's own id: never the request itself.
  console.error(`[${requestId}] request deadline of ${ms} ms passed: answered 503`);
  return answerExpired(new AppError('service_unavailable', UNAVAILABLE_MESSAGE));
}

/**
 * The client has its answer: a Response that arrives later is discarded, its body
 * cancelled so that a stream (the export) stops reading pages and releases its
 * connection. A late failure has been answered already and is not reported twice.
 */
function dropLateResult(response: Promise<Response>): void {
  response.then(
    (late) => late.body?.cancel().catch(() => {}),
    () => {},
  );
}
