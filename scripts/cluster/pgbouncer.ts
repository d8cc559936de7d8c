import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import {
  ADMIN_ROLE,
  APP_ROLE,
  DATABASE,
  paths,
  PGBOUNCER_DEFAULT_POOL_SIZE,
  PGBOUNCER_MAX_CLIENT_CONN,
  REPLICA_DATABASE_ALIAS,
  type Secrets,
  type State,
} from './layout';
import type { Programs } from './packages';
import { mkdirForPostgres, writePostgresFile } from './postgres';
import { ourPid, portOpen, run, stopPid, tail, waitUntil } from './processes';

/**
 * PgBouncer in transaction mode in front of the primary, as managed poolers run it: on
 * Debian's default configuration (/etc/pgbouncer/pgbouncer.ini, what `apt-get install
 * pgbouncer` writes) with only the cluster's own settings replaced, and no
 * `ignore_startup_parameters`.
 *
 * - `*` is a wildcard entry: any database name is pooled on the primary under that name,
 *   so the test suite can create its throw-away databases through the pooler.
 * - `cda_cluster_replica` is the replica's `cda_cluster` (DATABASE_REPLICA_URL).
 * - Debian 12's PgBouncer is 1.18: no prepared statements in transaction mode (the app
 *   runs with DATABASE_PREPARE=false), and it refuses startup parameters other than the
 *   few it tracks (client_encoding, DateStyle, TimeZone, standard_conforming_strings,
 *   application_name), as Neon's pooled endpoint does. The app sends none other behind a
 *   pooler; the statement timeout and `jit = off` are the app role's (postgres.ts).
 */

export const DEBIAN_DEFAULT_INI = '/etc/pgbouncer/pgbouncer.ini';

/**
 * A configuration file made of Debian's default one (`defaults`, its text), with each of
 * `settings` replacing its line (commented or not) or added to [pgbouncer], and
 * `databases` as the [databases] section's entries.
 */
export function onDebianDefaults(defaults: string, settings: Record<string, string>, databases: string[]): string {
  let ini = /^\[databases\]\s*$/m.test(defaults) ? defaults : `[databases]\n\n[pgbouncer]\n${defaults}`;
  ini = ini.replace(/^\[databases\]\s*$/m, () => `[databases]\n${databases.join('\n')}`);
  if (!/^\[pgbouncer\]\s*$/m.test(ini)) ini += '\n[pgbouncer]\n';
  for (const [name, value] of Object.entries(settings)) {
    // The setting's line in force, else its commented example, else a new line.
    const set = new RegExp(`^\\s*${name}\\s*=.*$`, 'm');
    const example = new RegExp(`^;\\s*${name}\\s*=.*$`, 'm');
    const line = set.test(ini) ? set : example.test(ini) ? example : undefined;
    ini = line ? ini.replace(line, () => `${name} = ${value}`) : ini.replace(/^\[pgbouncer\]\s*$/m, () => `[pgbouncer]\n${name} = ${value}`);
  }
  return ini;
}

/** Debian's default file, or nothing to start from where the package did not write one. */
const debianDefaults = () => (existsSync(DEBIAN_DEFAULT_INI) ? readFileSync(DEBIAN_DEFAULT_INI, 'utf8') : '');

const config = (s: State) => path.join(paths(s).pgbouncerDir, 'pgbouncer.ini');
const pidFile = (s: State) => path.join(paths(s).pgbouncerDir, 'pgbouncer.pid');
export const pgbouncerLog = (s: State) => path.join(paths(s).pgbouncerDir, 'pgbouncer.log');

export const pgbouncerPid = (s: State) => ourPid(pidFile(s), ['pgbouncer', config(s)]);

function ini(s: State): string {
  const dir = paths(s).pgbouncerDir;
  const written = `;; Written by scripts/cluster (npm run cluster) from ${DEBIAN_DEFAULT_INI}, with the cluster's settings.\n`;
  return `${written}${onDebianDefaults(
    debianDefaults(),
    {
      listen_addr: '127.0.0.1',
      listen_port: String(s.ports.pgbouncer),
      unix_socket_dir: '',
      auth_type: 'scram-sha-256',
      auth_file: path.join(dir, 'userlist.txt'),
      admin_users: ADMIN_ROLE,
      stats_users: ADMIN_ROLE,
      pool_mode: 'transaction',
      max_client_conn: String(PGBOUNCER_MAX_CLIENT_CONN),
      default_pool_size: String(PGBOUNCER_DEFAULT_POOL_SIZE),
      server_check_delay: '10',
      // After a failed login to a server (the replica stopped), PgBouncer answers every
      // client with an error for server_login_retry seconds (15 by default), even once the
      // server is back.
      server_login_retry: '1',
      pidfile: pidFile(s),
      logfile: pgbouncerLog(s),
      log_connections: '0',
      log_disconnections: '0',
    },
    [`${REPLICA_DATABASE_ALIAS} = host=127.0.0.1 port=${s.ports.replica} dbname=${DATABASE}`, `* = host=127.0.0.1 port=${s.ports.primary}`],
  )}`;
}

export async function ensurePgbouncer(s: State, sec: Secrets, programs: Programs, log: (line: string) => void): Promise<void> {
  const dir = paths(s).pgbouncerDir;
  mkdirForPostgres(dir);
  // Plain passwords: PgBouncer then speaks SCRAM to the clients and to Postgres.
  writePostgresFile(path.join(dir, 'userlist.txt'), `"${APP_ROLE}" "${sec.appPassword}"\n"${ADMIN_ROLE}" "${sec.adminPassword}"\n`);
  writePostgresFile(config(s), ini(s));
  if (pgbouncerPid(s) !== undefined) return;
  if (await portOpen(s.ports.pgbouncer)) throw new Error(`port ${s.ports.pgbouncer} (PgBouncer) is taken by another program: set CLUSTER_PGBOUNCER_PORT`);
  log(`starting PgBouncer (transaction pooling) on port ${s.ports.pgbouncer}…`);
  run(programs.pgbouncer, ['-d', config(s)], { postgresUser: true });
  await waitUntil(() => portOpen(s.ports.pgbouncer), 15_000, 'PgBouncer did not start', () => tail(pgbouncerLog(s)));
}

export async function stopPgbouncer(s: State): Promise<boolean> {
  const pid = pgbouncerPid(s);
  if (pid === undefined) return false;
  // SIGINT: "safe shutdown", after the transactions in progress.
  await stopPid(pid, { signal: 'SIGINT', graceMs: 10_000 });
  return true;
}

/** PgBouncer's admin console (simple query protocol only): its pools, clients and servers. */
export function pgbouncerShow(s: State, sec: Secrets, what: 'POOLS' | 'CLIENTS' | 'SERVERS' | 'STATS' | 'CONFIG'): Record<string, string>[] {
  const out = run('psql', ['-h', '127.0.0.1', '-p', String(s.ports.pgbouncer), '-U', ADMIN_ROLE, '-d', 'pgbouncer', '-A', '-F', '\t', '-P', 'footer=off', '-c', `SHOW ${what}`], {
    env: { ...process.env, PGPASSWORD: sec.adminPassword, PGCONNECT_TIMEOUT: '3' },
  });
  const [header, ...rows] = out.trimEnd().split('\n');
  const names = (header ?? '').split('\t');
  return rows.map((row) => Object.fromEntries(row.split('\t').map((v, i) => [names[i]!, v])));
}

const execFileAsync = promisify(execFile);

/** The same, without blocking the event loop (for sampling during a load). */
export async function pgbouncerShowAsync(s: State, sec: Secrets, what: 'POOLS' | 'CLIENTS' | 'SERVERS'): Promise<Record<string, string>[]> {
  const { stdout } = await execFileAsync('psql', ['-h', '127.0.0.1', '-p', String(s.ports.pgbouncer), '-U', ADMIN_ROLE, '-d', 'pgbouncer', '-A', '-F', '\t', '-P', 'footer=off', '-c', `SHOW ${what}`], {
    env: { ...process.env, PGPASSWORD: sec.adminPassword, PGCONNECT_TIMEOUT: '3' },
  });
  const [header, ...rows] = stdout.trimEnd().split('\n');
  const names = (header ?? '').split('\t');
  return rows.map((row) => Object.fromEntries(row.split('\t').map((v, i) => [names[i]!, v])));
}
