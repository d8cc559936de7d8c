import 'server-only';
import { openDatabase, openPostgres, setFallback, type Database, type DatabaseHandle } from '@/db/client';
import { config, poolerOf } from './config';
import { checkSessionSettings } from './database-settings';
import { errorCodeOf, isDatabaseUnavailable, isUnavailableCode } from './errors';
import { logger } from './observability/logger';

/**
 * The process's databases, opened from the configuration on first use and shared by every
 * request after it: the primary, and the read replica when DATABASE_REPLICA_URL is set.
 *
 * The handles live on globalThis: Next.js may evaluate this module once per bundle layer,
 * and two PGlite instances on one directory would corrupt it.
 */
const HANDLES = Symbol.for('contract-data-api.database');
interface Handles {
  primary?: Promise<DatabaseHandle>;
  /** When the session settings were last checked without an answer (or checked: Infinity). */
  settingsChecked?: number;
  replica?: ReplicaState;
  replicaOpening?: Promise<void>;
}
const handles = (): Handles => ((globalThis as typeof globalThis & { [HANDLES]?: Handles })[HANDLES] ??= {});

export function getDatabase(): Promise<DatabaseHandle> {
  const h = handles();
  h.primary ??= openDatabase(config().database).catch((error: unknown) => {
    // A failed open (database down at start) must not poison the process: retry next time.
    delete h.primary;
    throw error;
  });
  if (h.settingsChecked !== Infinity) h.primary.then(checkSettingsOnce, () => {});
  return h.primary;
}

/** Milliseconds between two checks of the session settings that got no answer (the database was down). */
const SETTINGS_RECHECK_MS = 60_000;

/**
 * Checks, once per process and off the request path (not awaited), that the primary's
 * connections run with the statement timeout, JIT and parallel-query settings the app wants, and warns
 * naming the SQL when not (server/database-settings.ts). It matters behind a pooler, where
 * the role carries them; a direct connection sends them itself and passes.
 */
function checkSettingsOnce(handle: DatabaseHandle): void {
  const h = handles();
  if ((h.settingsChecked ?? -Infinity) > Date.now() - SETTINGS_RECHECK_MS) return;
  h.settingsChecked = Infinity;
  // The embedded database is the app's own: nothing to check.
  if (handle.driver !== 'postgres') return;
  void checkSessionSettings(handle, config().database.statementTimeoutMs).then((outcome) => {
    if (outcome === 'unknown') h.settingsChecked = Date.now();
  });
}

/**
 * A database handle of its own for applying migrations (the caller closes it): on the
 * unpooled URL when there is one (DATABASE_URL_UNPOOLED or POSTGRES_URL_NON_POOLING), since
 * a migration is session-level work a transaction pooler may not carry (a SET that must
 * last, CREATE INDEX CONCURRENTLY outside a transaction, the pooler's own query timeout);
 * else the process's database, as before.
 */
export function openMigrationDatabase(): Promise<DatabaseHandle> {
  const settings = config().database;
  if (!settings.unpooledUrl) return getDatabase();
  return openDatabase({ ...settings, url: settings.unpooledUrl, unpooledUrl: undefined, pooler: undefined, poolMax: 1 });
}

/** The primary: writes, and every read that must see the latest write (keys, sessions, memberships). */
export async function getDb(): Promise<Database> {
  return (await getDatabase()).db;
}

/**
 * Where contract reads go (lists, get-one, exports, calendar feeds, the contracts pages):
 * the replica while it is healthy and close behind the primary, else the primary.
 */
export async function getReadDb(): Promise<Database> {
  const primary = await getDb();
  const replica = replicaState();
  return replica?.healthy ? replica.handle.db : primary;
}

/** Makes `handle` the process's database, and drops a replica (tests run the app's code against their own database). */
export function setProcessDatabase(handle: DatabaseHandle, replica?: DatabaseHandle): void {
  const h = handles();
  h.replica?.stop();
  h.primary = Promise.resolve(handle);
  // Its settings are the caller's: no check, no warning.
  h.settingsChecked = Infinity;
  h.replica = replica ? watchReplica(handle, replica, config().database.replicaMaxLagMs) : undefined;
  // A replica of the configuration is not opened over the given database.
  h.replicaOpening = Promise.resolve();
}

/**
 * The process's pools as they stand, without opening anything (for the metrics): the
 * primary once opened, the replica once watched, with whether reads go to it and its lag.
 */
export async function openedDatabases(): Promise<{
  primary?: DatabaseHandle;
  replica?: { handle: DatabaseHandle; inUse: boolean; lagSeconds?: number };
}> {
  const h = handles();
  const primary = await h.primary?.catch(() => undefined);
  const replica = h.replica && { handle: h.replica.handle, inUse: h.replica.healthy, lagSeconds: h.replica.lagSeconds };
  return { primary, replica };
}

// The replica ----------------------------------------------------------------------------

/**
 * A replica is used while a probe, every half of DATABASE_REPLICA_MAX_LAG_MS, finds it
 * answering and replayed at least up to where the primary's WAL was one probe earlier:
 * its lag is then under two probe intervals, that is under DATABASE_REPLICA_MAX_LAG_MS.
 * A replica that stops answering or falls behind is left out after one probe (reads go to
 * the primary), or at once when a read on it fails to reach it, and taken back after
 * GOOD_PROBES_TO_RETURN good probes in a row: a replica that has just come back (or a
 * pooler that still refuses new connections to it for a while) does not flap in and out.
 * A database that is no replica (pg_is_in_recovery() false, a read-only user on the
 * primary) has no lag.
 */
const GOOD_PROBES_TO_RETURN = 3;

interface ReplicaState {
  handle: DatabaseHandle;
  healthy: boolean;
  /** Good probes in a row since it was left out. */
  goodProbes: number;
  /** Why it is left out, for the log when that changes. */
  reason?: string;
  /** How far its replay trails, in seconds, as the last good probe measured it (for the metrics). */
  lagSeconds?: number;
  stop(): void;
}

/** The replica, opened on first use; until its first probe, reads go to the primary. */
function replicaState(): ReplicaState | undefined {
  const h = handles();
  const { url, replicaUrl, replicaMaxLagMs, poolMax, prepare, statementTimeoutMs } = config().database;
  if (h.replica || h.replicaOpening || !replicaUrl || !url) return h.replica;
  h.replicaOpening = Promise.all([
    getDatabase(),
    openPostgres(replicaUrl, {
      max: poolMax,
      prepare,
      statementTimeoutMs,
      behindPooler: poolerOf(replicaUrl, prepare) !== undefined,
      applicationName: 'contract-data-api replica',
    }),
  ]).then(
    ([primary, replica]) => {
      h.replica ??= watchReplica(primary, replica, replicaMaxLagMs);
    },
    () => {
      // Not even a pool could be made (a bad URL is caught by the configuration): retry on the next request.
      delete h.replicaOpening;
    },
  );
  return undefined;
}

/** The replica as the readiness check reports it (server/health/): a fixed reason, never a driver's message. */
export type ReplicaStatus =
  | { configured: false }
  | { configured: true; inUse: boolean; reason?: 'probing' | 'behind' | 'unreachable' | 'read_failed' };

/** Whether the replica is configured and in use; opens it as a first read would (its probe then decides). */
export function replicaStatus(): ReplicaStatus {
  const { url, replicaUrl } = config().database;
  const state = replicaState();
  if (!state) return replicaUrl && url ? { configured: true, inUse: false, reason: 'probing' } : { configured: false };
  if (state.healthy) return { configured: true, inUse: true };
  // The reasons setHealth is given below, as categories.
  const reason = state.reason?.startsWith('more than')
    ? 'behind'
    : state.reason?.startsWith('a read failed')
      ? 'read_failed'
      : state.reason?.startsWith('unreachable')
        ? 'unreachable'
        : 'probing';
  return { configured: true, inUse: false, reason };
}

function watchReplica(primary: DatabaseHandle, handle: DatabaseHandle, maxLagMs: number): ReplicaState {
  const intervalMs = Math.max(100, Math.floor(maxLagMs / 2));
  // Taken in on its first good probe when the process starts.
  const state: ReplicaState = { handle, healthy: false, goodProbes: GOOD_PROBES_TO_RETURN - 1, stop: () => clearInterval(timer) };
  // A read the replica cannot serve (it went away, or a pooler cannot reach it) is run on
  // the primary instead, and the replica is left out at once: the client sees no error.
  setFallback(handle.db, {
    fallback: primary.db,
    shouldRetry: isDatabaseUnavailable,
    onFailure: (error) => {
      if (state.healthy) setHealth(state, false, `a read failed (${errorCodeOf(error, isUnavailableCode) ?? 'unreachable'})`);
    },
  });
  let previousPrimaryLsn: string | undefined;
  let probing = false;
  const probe = async () => {
    if (probing) return;
    probing = true;
    try {
      const [primaryLsn, caughtUp] = await withTimeout(
        Promise.all([
          primary.query<{ lsn: string }>('SELECT pg_current_wal_lsn()::text AS lsn').then((rows) => rows[0]!.lsn),
          // The lag as postgres_exporter measures it: nothing to replay is no lag (an idle
          // primary writes no transaction to date the replay by), else the age of the last
          // transaction replayed.
          handle.query<{ standby: boolean; caught_up: boolean | null; lag_seconds: number | null }>(
            `SELECT pg_is_in_recovery() AS standby, pg_last_wal_replay_lsn() >= $1::pg_lsn AS caught_up,
               CASE WHEN NOT pg_is_in_recovery() OR pg_last_wal_receive_lsn() = pg_last_wal_replay_lsn() THEN 0
                    ELSE extract(epoch FROM now() - pg_last_xact_replay_timestamp()) END::float8 AS lag_seconds`,
            [previousPrimaryLsn ?? '0/0'],
          ),
        ]),
        intervalMs,
      ).then(([lsn, rows]) => {
        state.lagSeconds = rows[0]!.lag_seconds ?? undefined;
        return [lsn, !rows[0]!.standby || rows[0]!.caught_up === true] as const;
      });
      previousPrimaryLsn = primaryLsn;
      setHealth(state, caughtUp, caughtUp ? undefined : `more than ${maxLagMs} ms behind the primary`);
    } catch (error) {
      state.lagSeconds = undefined;
      setHealth(state, false, `unreachable (${errorCodeOf(error) ?? (error as Error).message})`);
    } finally {
      probing = false;
    }
  };
  const timer = setInterval(() => void probe(), intervalMs);
  timer.unref();
  void probe();
  return state;
}

function setHealth(state: ReplicaState, good: boolean, reason: string | undefined): void {
  state.goodProbes = good ? state.goodProbes + 1 : 0;
  const healthy = good && (state.healthy || state.goodProbes >= GOOD_PROBES_TO_RETURN);
  if (state.healthy !== healthy) {
    if (healthy) logger().info('read replica in use');
    else logger().warn({ reason }, 'read replica left out, reads go to the primary');
  }
  state.healthy = healthy;
  state.reason = reason;
}

function withTimeout<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  work.catch(() => {});
  return Promise.race([work, expired]).finally(() => clearTimeout(timer));
}
