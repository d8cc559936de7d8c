import type { UsageIncrement, RequestLogInsert } from '@/db/queries/key-activity';
import { insertRequestLog } from '@/db/queries/key-activity';
import { outcomeOf, type UsageOperation } from '@/lib/key-activity';
import { afterResponse } from '@/server/after-response';
import { getDb } from '@/server/database';
import { errorCodeOf } from '@/server/errors';
import { logger } from '@/server/observability/logger';
import { countRequestLogDropped } from '@/server/observability/metrics';
import type { RequestRecord } from '@/server/observability/request-scope';
import { processRateLimitStore } from '@/server/rate-limit';
import { API_PREFIX, EXPORT_PATH } from '@/server/http/api-paths';
import { usageCountsStore } from './counts-store';

/**
 * What each API key did, recorded without costing its request anything: the request's
 * record (server/observability/request.ts, once its answer is complete) is added to this
 * process's buffers (a count per key, hour/day, operation and outcome; one row of the
 * request log), and one flush a second sends them: the counts to Redis or the database
 * (./counts-store.ts), the rows in one multi-row insert. No database or Redis call on the
 * request's path.
 *
 * Bounded: at most MAX_PENDING_ROWS rows wait; beyond that, and whenever an insert fails,
 * rows are dropped and counted (request_log_dropped_total), never retried, so a slow or
 * down database costs memory of at most one buffer and never blocks a request. Counts are
 * kept and sent again after a failed flush (they are few: one entry per key, bucket and
 * outcome), up to MAX_PENDING_COUNTS entries.
 */

export const FLUSH_INTERVAL_MS = 1000;
export const MAX_PENDING_ROWS = 10_000;
const MAX_PENDING_COUNTS = 50_000;
const WARN_INTERVAL_MS = 30_000;

interface Recorder {
  counts: Map<string, UsageIncrement>;
  rows: RequestLogInsert[];
  timer: ReturnType<typeof setTimeout> | undefined;
  /** Resolves when the flush now scheduled is done (what serverless functions wait for after the response). */
  scheduled: Promise<void> | undefined;
  flushing: Promise<void> | undefined;
  lastWarning: number;
  unloggedWarnings: number;
}

const STATE = Symbol.for('contract-data-api.key-activity');
const g = globalThis as typeof globalThis & { [STATE]?: Recorder };
const recorder = (): Recorder => (g[STATE] ??= { counts: new Map(), rows: [], timer: undefined, scheduled: undefined, flushing: undefined, lastWarning: -Infinity, unloggedWarnings: 0 });

const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;

/** The export is counted apart from list and get-one. */
const EXPORT_ROUTE = `${API_PREFIX}${EXPORT_PATH}`;
const operationOf = (route: string): UsageOperation => (route === EXPORT_ROUTE ? 'export' : 'read');

/** The path and query as logged: a calendar feed's token is masked, the length bounded. */
export function loggedPath(url: string): string {
  let path: string;
  try {
    const parsed = new URL(url);
    path = parsed.pathname + parsed.search;
  } catch {
    path = '/';
  }
  path = path.replace(/^(\/api\/v1\/calendar\/)[^/?]*/, '$1****.ics');
  return path.length > 2048 ? path.slice(0, 2048) : path;
}

/** Adds one answered request of an API key to the buffers (called by the request's observation). */
export function recordKeyRequest(record: RequestRecord, url: string, clientAddress: string | null, userAgent: string | null): void {
  const keyId = record.keyId;
  if (!keyId) return;
  const state = recorder();
  const at = new Date();
  const operation = operationOf(record.route);
  const outcome = outcomeOf(record.status);
  const t = at.getTime();
  addCount(state, keyId, 'hour', new Date(t - (t % HOUR_MS)), operation, outcome);
  addCount(state, keyId, 'day', new Date(t - (t % DAY_MS)), operation, outcome);
  if (state.rows.length >= MAX_PENDING_ROWS) countRequestLogDropped(1);
  else {
    state.rows.push({
      tokenId: keyId,
      at,
      method: record.method.slice(0, 16),
      path: loggedPath(url),
      status: record.status,
      errorCode: record.errorCode ?? null,
      durationMs: record.durationMs,
      requestId: record.requestId.slice(0, 64),
      clientAddress: clientAddress?.slice(0, 64) ?? null,
      userAgent: userAgent?.slice(0, 300) ?? null,
      bytes: record.bytes,
    });
  }
  schedule(state);
}

function addCount(state: Recorder, tokenId: string, granularity: 'hour' | 'day', bucketStart: Date, operation: string, outcome: string): void {
  const key = `${tokenId}|${granularity}|${bucketStart.getTime()}|${operation}|${outcome}`;
  const entry = state.counts.get(key);
  if (entry) entry.n += 1;
  else if (state.counts.size < MAX_PENDING_COUNTS) state.counts.set(key, { tokenId, granularity, bucketStart, operation, outcome, n: 1 });
}

/**
 * The first request of a batch starts the second's timer, and asks (afterResponse) to be
 * kept alive until the flush is done: on serverless, the function then does not freeze
 * with counts in memory; in `next start` the wait costs nothing.
 */
function schedule(state: Recorder): void {
  if (state.scheduled) return;
  state.scheduled = new Promise<void>((resolve) => {
    state.timer = setTimeout(() => {
      state.timer = undefined;
      state.scheduled = undefined;
      void flushKeyActivity().then(resolve);
    }, FLUSH_INTERVAL_MS);
    state.timer.unref?.();
  });
  const batch = state.scheduled;
  afterResponse(() => batch, { msg: 'could not record the activity of a key' });
}

/**
 * Sends what is buffered now (and waits for a flush already under way first: one at a
 * time). Never rejects. Tests and the key's page call it to read counts that include this
 * process's last second.
 */
export async function flushKeyActivity(): Promise<void> {
  const state = recorder();
  while (state.flushing) await state.flushing;
  if (state.counts.size === 0 && state.rows.length === 0) return;
  const counts = state.counts;
  const rows = state.rows;
  state.counts = new Map();
  state.rows = [];
  state.flushing = sendBatch(state, counts, rows).finally(() => {
    state.flushing = undefined;
  });
  await state.flushing;
}

async function sendBatch(state: Recorder, counts: Map<string, UsageIncrement>, rows: RequestLogInsert[]): Promise<void> {
  const [countsResult, rowsResult] = await Promise.allSettled([
    counts.size > 0 ? usageCountsStore(processRateLimitStore(), getDb).add([...counts.values()]) : undefined,
    rows.length > 0 ? getDb().then((db) => insertRequestLog(db, rows)) : undefined,
  ]);
  if (countsResult.status === 'rejected') {
    // Sent again with the next batch (added to what came meanwhile).
    for (const [key, entry] of counts) {
      const current = state.counts.get(key);
      if (current) current.n += entry.n;
      else if (state.counts.size < MAX_PENDING_COUNTS) state.counts.set(key, entry);
    }
    schedule(state);
    warn(state, 'could not send the usage counts of keys; retrying', countsResult.reason);
  }
  if (rowsResult.status === 'rejected') {
    countRequestLogDropped(rows.length);
    warn(state, 'could not write the request log; rows dropped', rowsResult.reason, { dropped: rows.length });
  }
}

/** At most one warning per 30 s (a down database would otherwise write one a second). */
function warn(state: Recorder, msg: string, error: unknown, fields: Record<string, unknown> = {}): void {
  const now = Date.now();
  if (now - state.lastWarning < WARN_INTERVAL_MS) {
    state.unloggedWarnings += 1;
    return;
  }
  state.lastWarning = now;
  const reason = errorCodeOf(error) ?? (error instanceof Error ? error.name : 'unknown error');
  logger().warn({ ...fields, reason, unlogged_warnings: state.unloggedWarnings }, msg);
  state.unloggedWarnings = 0;
}

/** Rows and counts waiting to be sent (tests). */
export function pendingKeyActivity(): { rows: number; counts: number } {
  const state = recorder();
  return { rows: state.rows.length, counts: state.counts.size };
}
