import { spawnSync } from 'node:child_process';
import { appendFileSync, chownSync, existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import postgres from 'postgres';
import { ADMIN_ROLE, APP_ROLE, DATABASE, databaseUrl, paths, POSTGRES_MAX_CONNECTIONS, stateId, type Secrets, type State } from './layout';
import type { Programs } from './packages';
import { isRoot, ourPid, portOpen, run, stopPid, tail } from './processes';

/**
 * The cluster's own Postgres: a primary made with initdb and a hot-standby replica made
 * from it with `pg_basebackup -R` (streaming replication), each on its own port, both in
 * the state directory. The machine's Postgres (5432) is never touched.
 */

/** What `include_if_exists` pulls into postgresql.conf: the settings of the cluster. */
const CLUSTER_CONF = 'cluster.conf';

let postgresIds: { uid: number; gid: number } | undefined;
function postgresUser(): { uid: number; gid: number } {
  postgresIds ??= { uid: Number(run('id', ['-u', 'postgres']).trim()), gid: Number(run('id', ['-g', 'postgres']).trim()) };
  return postgresIds;
}

/** Files Postgres and PgBouncer read or write belong to the user they run as. */
export function giveToPostgres(file: string): void {
  if (!isRoot()) return;
  const { uid, gid } = postgresUser();
  chownSync(file, uid, gid);
}

export function writePostgresFile(file: string, content: string, mode = 0o600): void {
  writeFileSync(file, content, { mode });
  giveToPostgres(file);
}

export function mkdirForPostgres(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  giveToPostgres(dir);
}

/**
 * Where the Postgres data goes: `<state dir>/postgres`, or, when run as root and the
 * `postgres` user cannot reach the state directory (a checkout in a private directory such
 * as one made by mktemp), a directory of its own under /var/lib/postgresql named after
 * the state directory. The choice is kept in state.json.
 */
export function choosePgRoot(dir: string): string {
  const inside = path.join(dir, 'postgres');
  if (!isRoot()) return inside;
  mkdirForPostgres(inside);
  const reachable = spawnSync('runuser', ['-u', 'postgres', '--', 'test', '-w', inside]).status === 0;
  if (reachable) return inside;
  rmSync(inside, { recursive: true, force: true });
  const outside = path.join('/var/lib/postgresql', `cda-cluster-${stateId(dir)}`);
  mkdirForPostgres(outside);
  return outside;
}

function settings(port: number): string {
  return [
    `# Written by scripts/cluster (npm run cluster): this instance's settings.`,
    `listen_addresses = '127.0.0.1'`,
    `port = ${port}`,
    // TCP only: no socket file in /var/run/postgresql next to the machine's own Postgres.
    `unix_socket_directories = ''`,
    `max_connections = ${POSTGRES_MAX_CONNECTIONS}`,
    `shared_buffers = 128MB`,
    `wal_level = replica`,
    `max_wal_senders = 5`,
    // WAL the primary keeps for a replica that was stopped for a while (no slot to leak).
    `wal_keep_size = '256MB'`,
    `hot_standby = on`,
    `hot_standby_feedback = on`,
    `log_line_prefix = '%m [%p] %q%u@%d '`,
    `log_min_duration_statement = 1000`,
    '',
  ].join('\n');
}

export const primaryPid = (s: State) => ourPid(path.join(paths(s).primaryData, 'postmaster.pid'), [paths(s).primaryData]);
export const replicaPid = (s: State) => ourPid(path.join(paths(s).replicaData, 'postmaster.pid'), [paths(s).replicaData]);

function pgCtlStart(programs: Programs, dataDir: string, logFile: string): void {
  try {
    run(path.join(programs.pgBin, 'pg_ctl'), ['-D', dataDir, '-l', logFile, '-w', '-t', '120', 'start'], { postgresUser: true });
  } catch (error) {
    throw new Error(`${(error as Error).message}\n--- ${logFile}:\n${tail(logFile)}`);
  }
}

/** Creates the primary if it does not exist, and starts it if it is not running. Returns whether it was created. */
export async function ensurePrimary(s: State, sec: Secrets, programs: Programs, log: (line: string) => void): Promise<boolean> {
  const p = paths(s);
  let created = false;
  if (!existsSync(path.join(p.primaryData, 'PG_VERSION'))) {
    log(`creating the primary in ${p.primaryData} (initdb)…`);
    rmSync(p.primaryData, { recursive: true, force: true });
    // A replica of an earlier primary cannot follow a new one.
    rmSync(p.replicaData, { recursive: true, force: true });
    mkdirForPostgres(s.pgRoot);
    const pwfile = path.join(s.pgRoot, '.initdb-password');
    writePostgresFile(pwfile, `${sec.adminPassword}\n`);
    try {
      run(
        path.join(programs.pgBin, 'initdb'),
        ['-D', p.primaryData, '-U', ADMIN_ROLE, '--auth=scram-sha-256', `--pwfile=${pwfile}`, '-E', 'UTF8', '--locale=C.UTF-8'],
        { postgresUser: true },
      );
    } finally {
      rmSync(pwfile, { force: true });
    }
    writePostgresFile(path.join(p.primaryData, CLUSTER_CONF), settings(s.ports.primary));
    appendFileSync(path.join(p.primaryData, 'postgresql.conf'), `\ninclude_if_exists = '${CLUSTER_CONF}'\n`);
    created = true;
  }
  if (primaryPid(s) === undefined) {
    if (await portOpen(s.ports.primary)) throw new Error(`port ${s.ports.primary} (Postgres primary) is taken by another program: set CLUSTER_PG_PORT`);
    log(`starting the primary on port ${s.ports.primary}…`);
    pgCtlStart(programs, p.primaryData, p.primaryLog);
  }
  await ensureRolesAndDatabase(s, sec);
  return created;
}

/**
 * The app's role and database. The role carries the statement timeout, `jit = off` and
 * `max_parallel_workers_per_gather = 0`, as
 * docs/deploy-vercel.md asks behind a pooler: PgBouncer 1.18 refuses startup parameters it does not
 * know, so the app sends neither through it, and checks at start that its connections get
 * them from the role (it would warn, naming these statements, otherwise).
 */
async function ensureRolesAndDatabase(s: State, sec: Secrets): Promise<void> {
  const timeoutMs = Number(s.passedEnv.DATABASE_STATEMENT_TIMEOUT_MS ?? 5000);
  const sql = postgres(databaseUrl(s, sec, { role: 'admin', through: 'primary', database: 'postgres' }), { max: 1, onnotice: () => {} });
  try {
    const [role] = await sql`SELECT 1 FROM pg_roles WHERE rolname = ${APP_ROLE}`;
    if (!role) await sql.unsafe(`CREATE ROLE ${APP_ROLE} LOGIN CREATEDB`);
    // The password is base64url (layout.ts): nothing in it needs quoting.
    await sql.unsafe(`ALTER ROLE ${APP_ROLE} PASSWORD '${sec.appPassword}'`);
    await sql.unsafe(`ALTER ROLE ${APP_ROLE} SET statement_timeout = ${Math.trunc(timeoutMs)}`);
    // What the app sends at connect when no pooler is in between (db/client.ts).
    await sql.unsafe(`ALTER ROLE ${APP_ROLE} SET jit = off`);
    await sql.unsafe(`ALTER ROLE ${APP_ROLE} SET max_parallel_workers_per_gather = 0`);
    const [database] = await sql`SELECT 1 FROM pg_database WHERE datname = ${DATABASE}`;
    if (!database) await sql.unsafe(`CREATE DATABASE ${DATABASE} OWNER ${APP_ROLE}`);
  } finally {
    await sql.end({ timeout: 5 });
  }
}

/** Creates the replica with pg_basebackup if it does not exist, and starts it. */
export async function ensureReplica(s: State, sec: Secrets, programs: Programs, log: (line: string) => void): Promise<void> {
  const p = paths(s);
  if (!existsSync(path.join(p.replicaData, 'standby.signal'))) {
    log(`creating the replica in ${p.replicaData} (pg_basebackup -R from the primary)…`);
    rmSync(p.replicaData, { recursive: true, force: true });
    run(
      path.join(programs.pgBin, 'pg_basebackup'),
      ['-h', '127.0.0.1', '-p', String(s.ports.primary), '-U', ADMIN_ROLE, '-D', p.replicaData, '-R', '-X', 'stream', '-c', 'fast'],
      { postgresUser: true, env: { ...process.env, PGPASSWORD: sec.adminPassword } },
    );
    writePostgresFile(path.join(p.replicaData, CLUSTER_CONF), settings(s.ports.replica));
  }
  if (replicaPid(s) === undefined) {
    if (await portOpen(s.ports.replica)) throw new Error(`port ${s.ports.replica} (Postgres replica) is taken by another program: set CLUSTER_PG_PORT`);
    log(`starting the replica on port ${s.ports.replica}…`);
    pgCtlStart(programs, p.replicaData, p.replicaLog);
  }
  const sql = postgres(databaseUrl(s, sec, { role: 'admin', through: 'replica', database: 'postgres' }), { max: 1, onnotice: () => {} });
  try {
    const [{ standby }] = (await sql`SELECT pg_is_in_recovery() AS standby`) as unknown as [{ standby: boolean }];
    if (!standby) throw new Error(`the server on port ${s.ports.replica} is not a standby`);
  } finally {
    await sql.end({ timeout: 5 });
  }
}

export async function stopPostgres(s: State, which: 'primary' | 'replica', programs: Programs | undefined): Promise<boolean> {
  const p = paths(s);
  const dataDir = which === 'primary' ? p.primaryData : p.replicaData;
  const pid = which === 'primary' ? primaryPid(s) : replicaPid(s);
  if (pid === undefined) return false;
  if (programs) {
    try {
      run(path.join(programs.pgBin, 'pg_ctl'), ['-D', dataDir, '-m', 'fast', '-w', '-t', '60', 'stop'], { postgresUser: true });
      return true;
    } catch {
      /* fall back to the signal pg_ctl sends for a fast shutdown */
    }
  }
  await stopPid(pid, { signal: 'SIGINT', graceMs: 60_000 });
  return true;
}

/** Replication as the primary sees it: the replica's state and how far behind it replays. */
export async function replicationStatus(s: State, sec: Secrets): Promise<string> {
  const sql = postgres(databaseUrl(s, sec, { role: 'admin', through: 'primary', database: 'postgres' }), { max: 1, onnotice: () => {}, connect_timeout: 3 });
  try {
    const rows = await sql<{ state: string; lag_bytes: string | null; replay_lag: string | null }[]>`
      SELECT state, pg_wal_lsn_diff(pg_current_wal_lsn(), replay_lsn)::text AS lag_bytes, replay_lag::text AS replay_lag
        FROM pg_stat_replication`;
    if (rows.length === 0) return 'no replica connected';
    return rows.map((r) => `${r.state}, ${r.lag_bytes ?? '?'} bytes behind${r.replay_lag ? `, replay lag ${r.replay_lag}` : ''}`).join('; ');
  } catch (error) {
    return `unknown (${(error as Error).message})`;
  } finally {
    await sql.end({ timeout: 2 });
  }
}
