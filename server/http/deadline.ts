import { config } from '@/server/config';
import { AppError, UNAVAILABLE_MESSAGE } from '@/server/errors';
import { logger } from '@/server/observability/logger';
import { errorResponse } from './responses';

/** Handed to the work under a deadline. */
export interface DeadlineClock {
  /**
   * Waits for the client (its request body): the wait does not count against the deadline,
   * which bounds the server's own work. The wait needs a bound of its own (a 408).
   */
  waitForClient<T>(wait: Promise<T>): Promise<T>;
}

/**
 * An upper bound on how long a request of the API waits for its Response. A database that
 * stops answering on a connection already open (a frozen host, a partition) trips none
 * of the other bounds: statement_timeout runs in the server, connect_timeout only covers
 * connecting, and postgres.js has no client-side deadline, so the request would wait for
 * TCP to give up, minutes later. Past the deadline the client gets the API's 503 with
 * Retry-After; the stuck connection frees itself when the database or TCP gives up.
 *
 * The bound covers the time until the handler returns its Response: for the export and
 * the calendar feed, the first page. The rest of a streamed body is paced by the client,
 * and so is a request body: time spent in `waitForClient` is not counted (a slow upload
 * is the client's 408, not the server's 503 and its error log).
 */
export async function withinDeadline(
  work: (clock: DeadlineClock) => Promise<Response>,
  requestId: string,
  ms: number = config().requestDeadlineMs,
  /** The answer past the deadline: the API's 503 envelope unless the transport has its own (an HTML page). */
  answerExpired: (error: AppError) => Response = (error) => errorResponse(error, requestId),
): Promise<Response> {
  let timer: NodeJS.Timeout | undefined;
  let expire: (value: undefined) => void = () => {};
  let remaining = ms;
  let armedAt = 0;
  let clientWaits = 0;
  let settled = false;
  const arm = () => {
    armedAt = performance.now();
    timer = setTimeout(expire, Math.max(0, remaining), undefined);
  };
  const expired = new Promise<undefined>((resolve) => {
    expire = resolve;
    arm();
  });
  const clock: DeadlineClock = {
    async waitForClient(wait) {
      if (clientWaits++ === 0 && !settled) {
        clearTimeout(timer);
        remaining -= performance.now() - armedAt;
      }
      try {
        return await wait;
      } finally {
        if (--clientWaits === 0 && !settled) arm();
      }
    },
  };
  // Started as a promise whatever happens, so that a synchronous throw is a rejection too.
  const response = Promise.resolve().then(() => work(clock));
  try {
    const answer = await Promise.race([response, expired]);
    if (answer) return answer;
  } finally {
    settled = true;
    clearTimeout(timer);
  }
  dropLateResult(response);
  // One line naming the cause, under the request's own id: never the request itself.
  logger().error({ request_id: requestId, deadline_ms: ms }, 'request deadline passed: answered 503');
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
