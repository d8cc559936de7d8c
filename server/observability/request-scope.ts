import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * The record of the request being served, reachable from any code that runs for it
 * (authentication notes the key id, the error envelope its code, the logger the request
 * id of every line written meanwhile). One AsyncLocalStorage: Next.js already keeps its
 * own request stores in them, so the async context is tracked anyway and a lookup is a
 * property read. Kept apart from request.ts so that the logger can read it without an
 * import cycle.
 */
export interface RequestRecord {
  requestId: string;
  /** OpenTelemetry's trace id of the span around the request, when a tracer is set up. */
  traceId: string | undefined;
  method: string;
  /** The route template: /api/v1/contracts/{id}, never the path with its values. */
  route: string;
  status: number;
  /** The error envelope's code (server/errors.ts) of an answer >= 400. */
  errorCode: string | undefined;
  durationMs: number;
  /** Body bytes as the handler wrote them (before any compression by a proxy). */
  bytes: number;
  /** The id of the API key (or calendar feed token) that authenticated the request. */
  keyId: string | undefined;
  /** Its kind: only API keys' requests are counted and logged per key (server/usage/). */
  keyKind: 'api_key' | 'calendar_feed' | undefined;
  /** True when the client went away, or the body failed, before the body was complete. */
  aborted: boolean;
  /** When the request started (performance.now()). */
  startedAt: number;
  /** Set once the record is final; notes after that are ignored (a late result past the deadline). */
  finished: boolean;
}

export const requestScope = new AsyncLocalStorage<RequestRecord>();

/** The record of the request being served, if any (undefined in scripts, tests and timers). */
export function currentRequest(): RequestRecord | undefined {
  return requestScope.getStore();
}
