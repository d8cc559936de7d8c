import { and, asc, desc, eq, gte, inArray, lt, or, sql, type SQL } from 'drizzle-orm';
import type { Database } from '../client';
import { accessTokens, keyUsage, memberships, requestLog } from '../schema';

/**
 * Per-key usage counts and the request log (server/usage/): written in batches after the
 * responses, read by the key's page, bounded by the retention job.
 */

// Who may see which key ------------------------------------------------------------------

/**
 * THE one rule of which API keys a signed-in person may see the usage and requests of:
 * their own keys, and the keys owned by an organisation they own or administer (as
 * docs/keys.md's oversight). A subquery of key ids.
 */
export function keysVisibleTo(db: Database, userId: string) {
  const administered = db
    .select({ id: memberships.organizationId })
    .from(memberships)
    .where(and(eq(memberships.userId, userId), inArray(memberships.role, ['owner', 'admin'])));
  return db
    .select({ id: accessTokens.id })
    .from(accessTokens)
    .where(and(eq(accessTokens.kind, 'api_key'), or(eq(accessTokens.userId, userId), inArray(accessTokens.organizationId, administered))));
}

/** One key the person may see (its name for the page), or undefined: another's key and an unknown id alike. */
export async function selectVisibleKey(db: Database, userId: string, keyId: string) {
  const [row] = await db
    .select({ id: accessTokens.id, name: accessTokens.name, hint: accessTokens.hint, createdAt: accessTokens.createdAt, lastUsedAt: accessTokens.lastUsedAt, expiresAt: accessTokens.expiresAt, revokedAt: accessTokens.revokedAt })
    .from(accessTokens)
    .where(and(eq(accessTokens.id, keyId), inArray(accessTokens.id, keysVisibleTo(db, userId))));
  return row;
}

// Usage counts ---------------------------------------------------------------------------

export interface UsageIncrement {
  tokenId: string;
  granularity: 'hour' | 'day';
  bucketStart: Date;
  operation: string;
  outcome: string;
  n: number;
}

/** Adds a batch of counts in one statement (concurrent instances add, never overwrite). */
export async function addUsage(db: Database, increments: UsageIncrement[]): Promise<void> {
  if (increments.length === 0) return;
  // Only the counts of keys that still exist: a key deleted (with its account) in the
  // second its counts waited would fail the whole insert on the foreign key, and the
  // recorder would send that batch again, with every later count, forever.
  const ids = [...new Set(increments.map((row) => row.tokenId))];
  const existing = new Set((await db.select({ id: accessTokens.id }).from(accessTokens).where(inArray(accessTokens.id, ids))).map((row) => row.id));
  const rows = increments.filter((row) => existing.has(row.tokenId));
  if (rows.length === 0) return;
  await db
    .insert(keyUsage)
    .values(rows)
    .onConflictDoUpdate({
      target: [keyUsage.tokenId, keyUsage.granularity, keyUsage.bucketStart, keyUsage.operation, keyUsage.outcome],
      set: { n: sql`${keyUsage.n} + excluded.n` },
    });
}

/** One key's counts of a granularity since `from`. */
export function selectUsage(db: Database, tokenId: string, granularity: 'hour' | 'day', from: Date) {
  return db
    .select({ bucketStart: keyUsage.bucketStart, operation: keyUsage.operation, outcome: keyUsage.outcome, n: keyUsage.n })
    .from(keyUsage)
    .where(and(eq(keyUsage.tokenId, tokenId), eq(keyUsage.granularity, granularity), gte(keyUsage.bucketStart, from)));
}

// Request log ----------------------------------------------------------------------------

export type RequestLogInsert = typeof requestLog.$inferInsert;

/**
 * One insert of every row, sent as a single JSON parameter that Postgres unpacks
 * (jsonb_to_recordset) into the same columns with the same values: `at` as its ISO 8601
 * text (what Drizzle sends for a timestamp), numbers as numbers, null as null; a value too
 * long for its column fails the insert, as a parameter would.
 *
 * Not Drizzle's `insert(requestLog).values(rows)`: that builds a statement of eleven
 * parameters per row, and building it for a second's batch (a few hundred rows) cost the
 * process about 80 µs of CPU per row, 25 ms per flush of 300 rows (measured with tsx,
 * 2026-11-28), which a busy server pays on the same thread as its requests
 * (docs/benchmarks.md, "What the key activity costs"); JSON.stringify of the same rows
 * takes about a twentieth of that. The statement's text is the same for every batch,
 * whatever its size, and it is never over Postgres's 65,535 parameters.
 */
export async function insertRequestLog(db: Database, rows: RequestLogInsert[]): Promise<void> {
  if (rows.length === 0) return;
  const r = requestLog;
  const values: RequestLogValues[] = rows.map((row) => ({
    token_id: row.tokenId,
    at: row.at,
    method: row.method,
    path: row.path,
    status: row.status,
    error_code: row.errorCode ?? null,
    duration_ms: row.durationMs,
    request_id: row.requestId,
    client_address: row.clientAddress ?? null,
    user_agent: row.userAgent ?? null,
    bytes: row.bytes,
  }));
  await db.execute(sql`
    INSERT INTO ${r} (${sql.identifier(r.tokenId.name)}, ${sql.identifier(r.at.name)}, ${sql.identifier(r.method.name)}, ${sql.identifier(r.path.name)},
      ${sql.identifier(r.status.name)}, ${sql.identifier(r.errorCode.name)}, ${sql.identifier(r.durationMs.name)}, ${sql.identifier(r.requestId.name)},
      ${sql.identifier(r.clientAddress.name)}, ${sql.identifier(r.userAgent.name)}, ${sql.identifier(r.bytes.name)})
    SELECT token_id, at, method, path, status, error_code, duration_ms, request_id, client_address, user_agent, bytes
    FROM jsonb_to_recordset(${JSON.stringify(values)}::jsonb) AS x(
      token_id uuid, at timestamptz, method text, path text, status smallint, error_code text,
      duration_ms real, request_id text, client_address text, user_agent text, bytes bigint)
    -- A key deleted meanwhile loses its rows, not the others' (the foreign key would refuse the batch).
    WHERE EXISTS (SELECT 1 FROM ${accessTokens} t WHERE t.${sql.identifier(accessTokens.id.name)} = x.token_id)`);
}

/** A row of insertRequestLog's JSON, by column name. */
interface RequestLogValues {
  token_id: string;
  at: Date;
  method: string;
  path: string;
  status: number;
  error_code: string | null;
  duration_ms: number;
  request_id: string;
  client_address: string | null;
  user_agent: string | null;
  bytes: number;
}

const logColumns = {
  id: requestLog.id,
  at: requestLog.at,
  method: requestLog.method,
  path: requestLog.path,
  status: requestLog.status,
  errorCode: requestLog.errorCode,
  durationMs: requestLog.durationMs,
  requestId: requestLog.requestId,
  clientAddress: requestLog.clientAddress,
  userAgent: requestLog.userAgent,
  bytes: requestLog.bytes,
  keyId: requestLog.tokenId,
  keyName: accessTokens.name,
};
export type RequestLogRow = { [K in keyof typeof logColumns]: (typeof logColumns)[K]['_']['data'] } & { keyName: string };

/**
 * A page of one key's requests, newest first, after the cursor (at, id), optionally of
 * a range of statuses. Only the key's newest `keep` rows count (what the log promises).
 */
export async function selectRequestLog(
  db: Database,
  tokenId: string,
  options: { statusFrom?: number; statusTo?: number; before?: { at: Date; id: number }; limit: number; since: Date },
): Promise<RequestLogRow[]> {
  const conditions: (SQL | undefined)[] = [eq(requestLog.tokenId, tokenId), gte(requestLog.at, options.since)];
  if (options.statusFrom !== undefined) conditions.push(gte(requestLog.status, options.statusFrom));
  if (options.statusTo !== undefined) conditions.push(lt(requestLog.status, options.statusTo));
  if (options.before) {
    conditions.push(or(lt(requestLog.at, options.before.at), and(eq(requestLog.at, options.before.at), lt(requestLog.id, options.before.id))));
  }
  return db
    .select(logColumns)
    .from(requestLog)
    .innerJoin(accessTokens, eq(accessTokens.id, requestLog.tokenId))
    .where(and(...conditions))
    .orderBy(desc(requestLog.at), desc(requestLog.id))
    .limit(options.limit) as Promise<RequestLogRow[]>;
}

/** The newest request of a key (its "last used": time, address, user agent). */
export async function selectLastRequest(db: Database, tokenId: string): Promise<RequestLogRow | undefined> {
  const [row] = await selectRequestLog(db, tokenId, { limit: 1, since: new Date(0) });
  return row;
}

/** A request by its id among the keys the person may see, or undefined (another's and an unknown id alike). */
export async function selectVisibleRequest(db: Database, userId: string, requestId: string): Promise<RequestLogRow | undefined> {
  const [row] = (await db
    .select(logColumns)
    .from(requestLog)
    .innerJoin(accessTokens, eq(accessTokens.id, requestLog.tokenId))
    .where(and(eq(requestLog.requestId, requestId), inArray(requestLog.tokenId, keysVisibleTo(db, userId))))
    .orderBy(asc(requestLog.id))
    .limit(1)) as RequestLogRow[];
  return row;
}

// Retention ------------------------------------------------------------------------------

/**
 * Deletes request-log rows older than `before`, and every key's rows beyond its newest
 * `keep` (the ranks of one key are read through its index). Returns the rows deleted.
 */
export async function pruneRequestLog(db: Database, before: Date, keep: number): Promise<number> {
  const old = await db.delete(requestLog).where(lt(requestLog.at, before)).returning({ id: requestLog.id });
  const beyond = await db.execute(sql`
    DELETE FROM request_log r USING (
      SELECT k.token_id, c.at AS cut_at, c.id AS cut_id
      FROM (SELECT token_id FROM request_log GROUP BY token_id HAVING count(*) > ${keep}) k
      CROSS JOIN LATERAL (
        SELECT at, id FROM request_log WHERE token_id = k.token_id ORDER BY at DESC, id DESC OFFSET ${keep - 1} LIMIT 1
      ) c
    ) cut
    WHERE r.token_id = cut.token_id AND (r.at < cut.cut_at OR (r.at = cut.cut_at AND r.id < cut.cut_id))
    RETURNING r.id`);
  const beyondRows = Array.isArray(beyond) ? beyond.length : ((beyond as { rows?: unknown[] }).rows?.length ?? 0);
  return old.length + beyondRows;
}

/** Deletes hourly counts older than `hoursBefore` and daily counts older than `daysBefore`. */
export async function pruneUsage(db: Database, hoursBefore: Date, daysBefore: Date): Promise<number> {
  const rows = await db
    .delete(keyUsage)
    .where(
      or(
        and(eq(keyUsage.granularity, 'hour'), lt(keyUsage.bucketStart, hoursBefore)),
        and(eq(keyUsage.granularity, 'day'), lt(keyUsage.bucketStart, daysBefore)),
      ),
    )
    .returning({ n: keyUsage.n });
  return rows.length;
}
