import type { Database } from '@/db/client';
import { selectLastRequest, selectRequestLog, selectVisibleKey, selectVisibleRequest, type RequestLogRow } from '@/db/queries/key-activity';
import {
  REQUEST_ID_PATTERN,
  REQUEST_LOG_DAYS,
  REQUEST_LOG_PAGE_SIZE,
  USAGE_DAYS,
  USAGE_HOURS,
  USAGE_OPERATIONS,
  USAGE_OUTCOMES,
  type LoggedRequest,
  type OutcomeCounts,
  type StatusClass,
  type UsageBucket,
  type UsageOperation,
  type UsageOutcome,
} from '@/lib/key-activity';
import { statusOf } from '@/server/access/tokens';
import { AppError } from '@/server/errors';
import { processRateLimitStore } from '@/server/rate-limit';
import { usageCountsStore } from './counts-store';
import { flushKeyActivity } from './recorder';

/**
 * What the key's settings page shows: its usage by hour and day, its requests, and a
 * request found by its id. Every function starts from "which keys may this person see"
 * (keysVisibleTo in db/queries/key-activity.ts): a key or request outside them is "not
 * found", in the same words and the same single query as one that does not exist.
 */

const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;

const NO_SUCH_KEY = 'No such API key.';

export interface KeyUsage {
  key: { id: string; name: string; hint: string; status: string; createdAt: string };
  hours: UsageBucket[];
  days: UsageBucket[];
  /** Totals of the 90 days, per operation and outcome. */
  totals: UsageBucket;
  lastUsed: { at: string; clientAddress: string | null; userAgent: string | null } | null;
  store: 'redis' | 'database';
}

const zeros = (): OutcomeCounts => ({ '2xx': 0, '304': 0, '4xx': 0, '429': 0, '5xx': 0 });
const emptyBucket = (start: Date): UsageBucket => ({ start: start.toISOString(), read: zeros(), export: zeros() });

function starts(now: Date, size: number, count: number): Date[] {
  const t = now.getTime();
  const last = t - (t % size);
  return Array.from({ length: count }, (_, i) => new Date(last - (count - 1 - i) * size));
}

export async function keyUsage(db: Database, userId: string, keyId: string, now = new Date()): Promise<KeyUsage> {
  const key = await selectVisibleKey(db, userId, keyId);
  if (!key) throw new AppError('not_found', NO_SUCH_KEY);
  // This process's last second is included; other instances' arrive within a second.
  await flushKeyActivity();
  const store = usageCountsStore(processRateLimitStore(), async () => db);
  const hourStarts = starts(now, HOUR_MS, USAGE_HOURS);
  const dayStarts = starts(now, DAY_MS, USAGE_DAYS);
  const [hourRows, dayRows, last] = await Promise.all([
    store.read(keyId, 'hour', hourStarts),
    store.read(keyId, 'day', dayStarts),
    selectLastRequest(db, keyId),
  ]);
  const fill = (bucketStarts: Date[], rows: typeof hourRows) => {
    const byStart = new Map(bucketStarts.map((s) => [s.getTime(), emptyBucket(s)]));
    for (const row of rows) {
      const bucket = byStart.get(row.bucketStart.getTime());
      if (!bucket || !isOperation(row.operation) || !isOutcome(row.outcome)) continue;
      bucket[row.operation][row.outcome] += Number(row.n);
    }
    return [...byStart.values()];
  };
  const days = fill(dayStarts, dayRows);
  const totals = emptyBucket(dayStarts[0]!);
  for (const day of days) {
    for (const operation of USAGE_OPERATIONS) for (const outcome of USAGE_OUTCOMES) totals[operation][outcome] += day[operation][outcome];
  }
  return {
    key: { id: key.id, name: key.name, hint: key.hint, status: statusOf(key, now), createdAt: key.createdAt.toISOString() },
    hours: fill(hourStarts, hourRows),
    days,
    totals,
    lastUsed: last
      ? { at: last.at.toISOString(), clientAddress: last.clientAddress, userAgent: last.userAgent }
      : key.lastUsedAt
        ? { at: key.lastUsedAt.toISOString(), clientAddress: null, userAgent: null }
        : null,
    store: store.kind,
  };
}

const isOperation = (value: string): value is UsageOperation => (USAGE_OPERATIONS as readonly string[]).includes(value);
const isOutcome = (value: string): value is UsageOutcome => (USAGE_OUTCOMES as readonly string[]).includes(value);

// The request log -------------------------------------------------------------------------

const STATUS_RANGES: Record<StatusClass, [number, number]> = { '2xx': [200, 300], '3xx': [300, 400], '4xx': [400, 500], '5xx': [500, 600] };

/** An opaque cursor: the last row's time and id. */
const encodeCursor = (row: RequestLogRow) => Buffer.from(`${row.at.getTime()}.${row.id}`).toString('base64url');

function decodeCursor(cursor: string): { at: Date; id: number } {
  const match = /^([0-9]{1,15})\.([0-9]{1,18})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (!match || cursor.length > 64) {
    throw new AppError('invalid_request', 'cursor is not one this page gave: start again from the first page.', [{ param: 'cursor', message: 'Invalid cursor.' }]);
  }
  return { at: new Date(Number(match[1])), id: Number(match[2]) };
}

export function toLoggedRequest(row: RequestLogRow): LoggedRequest {
  return {
    at: row.at.toISOString(),
    method: row.method,
    path: row.path,
    status: row.status,
    errorCode: row.errorCode,
    durationMs: row.durationMs,
    requestId: row.requestId,
    clientAddress: row.clientAddress,
    userAgent: row.userAgent,
    bytes: Number(row.bytes),
    keyId: row.keyId,
    keyName: row.keyName,
  };
}

export async function keyRequests(
  db: Database,
  userId: string,
  input: { keyId: string; statusClass?: StatusClass; cursor?: string },
): Promise<{ requests: LoggedRequest[]; nextCursor: string | null }> {
  const before = input.cursor === undefined ? undefined : decodeCursor(input.cursor);
  if (!(await selectVisibleKey(db, userId, input.keyId))) throw new AppError('not_found', NO_SUCH_KEY);
  await flushKeyActivity();
  const range = input.statusClass ? STATUS_RANGES[input.statusClass] : undefined;
  const rows = await selectRequestLog(db, input.keyId, {
    statusFrom: range?.[0],
    statusTo: range?.[1],
    before,
    limit: REQUEST_LOG_PAGE_SIZE + 1,
    since: new Date(0),
  });
  const page = rows.slice(0, REQUEST_LOG_PAGE_SIZE);
  return { requests: page.map(toLoggedRequest), nextCursor: rows.length > REQUEST_LOG_PAGE_SIZE ? encodeCursor(page.at(-1)!) : null };
}

/**
 * A request by the id its answer carried (X-Request-Id, an error body's request_id), among
 * the keys the person may see. One message for an unknown id and for another's.
 */
export async function findRequest(db: Database, userId: string, requestId: string): Promise<LoggedRequest> {
  const id = requestId.trim();
  if (!REQUEST_ID_PATTERN.test(id)) {
    throw new AppError('invalid_request', 'A request id is "req_" followed by 32 hexadecimal digits, as in X-Request-Id or an error body\'s request_id.', [
      { param: 'requestId', message: 'Not a request id.' },
    ]);
  }
  await flushKeyActivity();
  const row = await selectVisibleRequest(db, userId, id);
  if (!row) {
    throw new AppError('not_found', `No request ${id} among the requests of your keys (each key's last 1,000, kept ${REQUEST_LOG_DAYS} days).`);
  }
  return toLoggedRequest(row);
}
