import type { Database } from '@/db/client';
import { clientAddressOf } from './client-address';
import type { DeadlineClock } from './deadline';

/**
 * What every request of the API carries through authentication, rate limiting and the
 * procedures, whatever the transport (the REST adapter, the export, the calendar feed,
 * the app's own tRPC endpoint).
 */
export interface RequestContext {
  /** The primary: writes and reads that must see the latest write (tokens, memberships). */
  db: Database;
  /** Where contract reads go: the read replica while it is healthy, else the primary (server/database.ts). */
  readDb: Database;
  requestId: string;
  /** The request's URL as the server received it (its path and query; the origin is local). */
  url: string;
  /** The request's headers (read-only). */
  headers: Headers;
  /** The client's address, for limits on unauthenticated traffic (./client-address.ts). */
  clientAddress: string;
  /** Sets a response header; kept on error responses too. */
  setHeader(name: string, value: string): void;
  /**
   * Waits for the client (its request body) without counting the wait against the request
   * deadline (./deadline.ts); the wait needs a bound of its own.
   */
  waitForClient?<T>(wait: Promise<T>): Promise<T>;
  /** Present on a conditional GET whose transport decides later whether the request counts (see DeferredRateLimit). */
  deferredRateLimit?: DeferredRateLimit;
}

/**
 * A conditional GET (If-None-Match) answered 304 does not count against the key's rate
 * limit. Its transport puts an empty DeferredRateLimit in the context; authentication then
 * consumes the conditional quota instead and fills in the two calls below, and the
 * transport makes one of them once it knows the answer (server/rest/json-operations.ts).
 */
export interface DeferredRateLimit {
  /** Consumes one request of the key's own quota (throws the 429 when it is used up). */
  charge?: () => Promise<void>;
  /** Sets the key's rate-limit headers without consuming anything (for the 304). */
  show?: () => Promise<void>;
}

/** The context of one request whose response headers are collected in `responseHeaders`. */
export function requestContext(
  req: Request,
  databases: { db: Database; readDb: Database },
  requestId: string,
  responseHeaders: Headers,
  clock?: DeadlineClock,
): RequestContext {
  return {
    ...databases,
    requestId,
    url: req.url,
    headers: req.headers,
    clientAddress: clientAddressOf(req.headers),
    setHeader: (name, value) => responseHeaders.set(name, value),
    waitForClient: (wait) => (clock ? clock.waitForClient(wait) : wait),
  };
}
