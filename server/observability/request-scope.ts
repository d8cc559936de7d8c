import { AsyncLocalStorage } from 'node:async_hooks';
import { workAsyncStorage } from 'next/dist/server/app-render/work-async-storage.external';

/**
 * The record of the request being served, reachable from any code that runs for it
 * (authentication notes the key id, the error envelope its code, the logger the request
 * id of every line written meanwhile). Kept apart from request.ts so that the logger can
 * read it without an import cycle.
 *
 * Under Next.js the record hangs on Next.js's own store of the request (its work store,
 * one object per request, in an AsyncLocalStorage that the App Router runs every route
 * handler and page in): no AsyncLocalStorage of the app's own. On Node 20 each enabled
 * AsyncLocalStorage copies its store onto every promise and other async resource created
 * anywhere in the process, a few thousand per request here, which made a storage of our
 * own one of the larger costs of observing a request (docs/benchmarks.md, "What
 * observability costs"). Outside Next.js (tests calling a handler directly, scripts) no
 * such store exists, and a storage of our own carries the record instead: it is only
 * ever enabled in such a process.
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

/** Records by Next.js's work store of their request (collected with it). */
const RECORDS = new WeakMap<object, RequestRecord>();
/** Outside Next.js only. */
const ownScope = new AsyncLocalStorage<RequestRecord>();

/** Runs `run` with `record` as the current request's. */
export function inRequestScope<T>(record: RequestRecord, run: () => T): T {
  const store = workAsyncStorage.getStore();
  // A second observer inside the same request (a wrapper around an observed handler) keeps the first record.
  if (store) {
    if (!RECORDS.has(store)) RECORDS.set(store, record);
    return run();
  }
  return ownScope.run(record, run);
}

/** The record of the request being served, if any (undefined in scripts, tests and timers). */
export function currentRequest(): RequestRecord | undefined {
  const store = workAsyncStorage.getStore();
  return (store && RECORDS.get(store)) || ownScope.getStore();
}
