import { spawnSync } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import path from 'node:path';
import { DEMO_PASSWORD, DEMO_USERS } from '@/db/seed/demo';
import { ensureHaproxy, haproxyPid, LIVE_BACKEND, serverStats, stopHaproxy } from './haproxy';
import { ensureBuild, instanceNumbers, instancePid, instancePort, PASSED_ENV, PROJECT_ROOT, startInstance, stopInstance } from './instances';
import {
  APP_POOL_MAX,
  balancerUrl,
  databaseUrl,
  defaultPorts,
  masked,
  paths,
  PGBOUNCER_DEFAULT_POOL_SIZE,
  PGBOUNCER_MAX_CLIENT_CONN,
  POSTGRES_MAX_CONNECTIONS,
  readState,
  REPLICA_DATABASE_ALIAS,
  redisUrl,
  secrets,
  stateDir,
  writeState,
  type State,
} from './layout';
import { ensurePrograms, installedPrograms, type Programs } from './packages';
import { ensurePgbouncer, pgbouncerPid, pgbouncerShow, stopPgbouncer } from './pgbouncer';
import { choosePgRoot, ensurePrimary, ensureReplica, primaryPid, replicaPid, replicationStatus, stopPostgres } from './postgres';
import { alive, waitUntil } from './processes';
import { describeReadiness, instanceReadiness } from './readiness';
import { ensureRedis, redisPid, stopRedis } from './redis';

/** `npm run cluster -- up | down | status | env`: see scripts/cluster/main.ts. */

export type Log = (line: string) => void;
export const log: Log = (line) => console.log(`[cluster] ${line}`);

export interface UpOptions {
  /** Build again even if a build exists. */
  rebuild?: boolean;
  /** Use this build directory (for example CI's `.next`) instead of `.next-cluster`. */
  distDir?: string;
}

/** Only one `up` or `down` at a time per state directory. */
function withLock<T>(dir: string, fn: () => Promise<T>): Promise<T> {
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, 'lock');
  let fd: number;
  try {
    fd = openSync(file, 'wx');
  } catch {
    const holder = Number(readFileSync(file, 'utf8'));
    if (Number.isInteger(holder) && holder > 0 && alive(holder)) {
      throw new Error(`another cluster command (pid ${holder}) is running on ${dir}`);
    }
    rmSync(file, { force: true });
    fd = openSync(file, 'wx');
  }
  writeSync(fd, String(process.pid));
  closeSync(fd);
  return fn().finally(() => rmSync(file, { force: true }));
}

function passedEnv(): Record<string, string> {
  return Object.fromEntries(Object.entries(process.env).filter(([k, v]) => PASSED_ENV.test(k) && v !== undefined) as [string, string][]);
}

/** Brings up whatever part of the cluster is not running. Returns the state and the seconds it took. */
export async function up(options: UpOptions = {}, say: Log = log): Promise<{ state: State; seconds: number }> {
  const started = Date.now();
  const dir = stateDir();
  return withLock(dir, async () => {
    const programs = ensurePrograms(say);
    let s = readState(dir);
    if (!s) {
      s = { dir, pgRoot: choosePgRoot(dir), ports: defaultPorts(), distDir: '.next-cluster', passedEnv: passedEnv(), createdAt: new Date().toISOString() };
    }
    const running = instanceNumbers(s).filter((n) => instancePid(s!, n) !== undefined);
    // The instances read their build directory while they run: it cannot be rebuilt under them.
    if (running.length > 0 && (options.rebuild || (options.distDir && options.distDir !== s.distDir))) {
      throw new Error('--rebuild and --dist-dir apply to instances not yet running: npm run cluster -- down first');
    }
    if (options.distDir) s.distDir = options.distDir;
    const wanted = passedEnv();
    if (running.length === 0) s.passedEnv = wanted;
    else if (JSON.stringify(wanted) !== JSON.stringify(s.passedEnv)) {
      say(`note: running instances keep their settings ${JSON.stringify(s.passedEnv)}; \`down\` then \`up\` to apply ${JSON.stringify(wanted)}`);
    }
    writeState(s);
    const sec = secrets(dir);

    await ensurePrimary(s, sec, programs, say);
    await ensureReplica(s, sec, programs, say);
    say('applying migrations and the demo data on the primary (npm run db:seed)…');
    const seed = spawnSync(process.execPath, [path.join(PROJECT_ROOT, 'node_modules', 'tsx', 'dist', 'cli.mjs'), '--conditions=react-server', 'scripts/db-seed.ts'], {
      cwd: PROJECT_ROOT,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, NODE_ENV: 'production', AUTH_SECRET: sec.authSecret, DATABASE_URL: databaseUrl(s, sec, { through: 'primary' }) },
      encoding: 'utf8',
    });
    if (seed.status !== 0) throw new Error(`npm run db:seed failed:\n${seed.stdout}${seed.stderr}`);
    say(`  ${seed.stdout.trim().split('\n').join(' ')}`);
    await ensureRedis(s, sec, programs, say);
    await ensurePgbouncer(s, sec, programs, say);
    ensureBuild(s, options.rebuild ?? false, say);

    const toStart = instanceNumbers(s).filter((n) => instancePid(s!, n) === undefined);
    if (toStart.length > 0) {
      say(`starting instance${toStart.length > 1 ? 's' : ''} ${toStart.join(', ')} (next start on ${toStart.map((n) => instancePort(s!, n)).join(', ')})…`);
      await Promise.all(toStart.map((n) => startInstance(s!, sec, n)));
    }
    await ensureHaproxy(s, programs, say);
    await waitUntil(
      async () => (await serverStats(s!)).every((server) => server.status === 'UP'),
      30_000,
      'HAProxy does not see every instance up',
      () => '(npm run cluster -- status)',
    );
    return { state: s, seconds: (Date.now() - started) / 1000 };
  });
}

export function printUp(s: State, seconds: number): void {
  const lines = [
    '',
    `  Contract Data API cluster, up in ${seconds.toFixed(0)} s (state in ${path.relative(PROJECT_ROOT, s.dir) || s.dir})`,
    '',
    `  API and app      ${balancerUrl(s)}   (HAProxy, round robin; X-Served-By names the instance)`,
    `  Instances        ${instanceNumbers(s).map((n) => `app${n} :${instancePort(s, n)}`).join(', ')}   (next start, build in ${s.distDir})`,
    `  PgBouncer        127.0.0.1:${s.ports.pgbouncer}   (transaction mode) -> primary :${s.ports.primary}, replica :${s.ports.replica}`,
    `  Redis            127.0.0.1:${s.ports.redis}`,
    '',
    `  Demo login: ${DEMO_USERS.alice.email} / ${DEMO_PASSWORD} (also ${DEMO_USERS.bob.email}, ${DEMO_USERS.carol.email})`,
    `  An API key:  eval "$(npm run -s cluster -- env)" && npm run apikey -- create --email ${DEMO_USERS.alice.email} --name test`,
    '  Status: npm run cluster -- status      Stop: npm run cluster -- down',
    '',
  ];
  console.log(lines.join('\n'));
}

/** Stops everything of the cluster that runs, last started first. */
export async function down(options: { purge?: boolean } = {}, say: Log = log): Promise<void> {
  const dir = stateDir();
  const s = readState(dir);
  if (!s) {
    say(`no cluster in ${dir}`);
    return;
  }
  await withLock(dir, async () => {
    let programs: Programs | undefined;
    try {
      programs = installedPrograms();
    } catch {
      /* pg_ctl missing: Postgres is stopped by signal */
    }
    const stopped: string[] = [];
    const note = (name: string, pid: number | undefined, did: boolean) => did && stopped.push(`${name} (pid ${pid})`);
    let pid = haproxyPid(s);
    note('HAProxy', pid, await stopHaproxy(s));
    await Promise.all(
      instanceNumbers(s).map(async (n) => {
        const p = instancePid(s, n);
        note(`app${n}`, p, await stopInstance(s, n));
      }),
    );
    pid = pgbouncerPid(s);
    note('PgBouncer', pid, await stopPgbouncer(s));
    pid = redisPid(s);
    note('Redis', pid, await stopRedis(s));
    pid = replicaPid(s);
    note('replica', pid, await stopPostgres(s, 'replica', programs));
    pid = primaryPid(s);
    note('primary', pid, await stopPostgres(s, 'primary', programs));
    say(stopped.length > 0 ? `stopped ${stopped.join(', ')}` : 'nothing was running');
    if (options.purge) {
      rmSync(s.pgRoot, { recursive: true, force: true });
      for (const entry of ['state.json', 'secrets.json', 'redis', 'haproxy', 'app']) rmSync(path.join(dir, entry), { recursive: true, force: true });
      say(`deleted the cluster's data (${dir}${s.pgRoot.startsWith(dir) ? '' : ` and ${s.pgRoot}`})`);
    }
  });
}

/** What runs where, and how the parts see each other. */
export async function status(): Promise<boolean> {
  const s = readState();
  if (!s) {
    console.log(`No cluster in ${stateDir()} (npm run cluster to start one).`);
    return false;
  }
  const sec = secrets(s.dir);
  const row = (name: string, pid: number | undefined, where: string) =>
    console.log(`  ${name.padEnd(10)} ${pid === undefined ? 'stopped'.padEnd(14) : `running ${String(pid).padEnd(6)}`} ${where}`);
  console.log(`Cluster in ${s.dir}`);
  const haproxy = haproxyPid(s);
  row('HAProxy', haproxy, balancerUrl(s));
  // Each instance's readiness, asked on its own port (all at once: each takes up to a second).
  const readiness = await Promise.all(instanceNumbers(s).map((n) => (instancePid(s, n) === undefined ? undefined : instanceReadiness(instancePort(s, n)))));
  for (const n of instanceNumbers(s)) {
    row(`app${n}`, instancePid(s, n), `http://127.0.0.1:${instancePort(s, n)}  (log ${path.relative(PROJECT_ROOT, path.join(paths(s).appDir, `instance-${n}.log`))})`);
    const ready = readiness[n - 1];
    if (ready) console.log(`  ${''.padEnd(10)} readiness: ${describeReadiness(ready)}`);
  }
  const pgb = pgbouncerPid(s);
  row('PgBouncer', pgb, `127.0.0.1:${s.ports.pgbouncer}  transaction mode, default_pool_size ${PGBOUNCER_DEFAULT_POOL_SIZE}, max_client_conn ${PGBOUNCER_MAX_CLIENT_CONN}`);
  row('Redis', redisPid(s), masked(redisUrl(s, sec)));
  const primary = primaryPid(s);
  row('primary', primary, `${masked(databaseUrl(s, sec, { through: 'primary' }))}  max_connections ${POSTGRES_MAX_CONNECTIONS}`);
  row('replica', replicaPid(s), masked(databaseUrl(s, sec, { through: 'replica' })));
  console.log(`  Instances: DATABASE_URL ${masked(databaseUrl(s, sec))}, DATABASE_REPLICA_URL ${masked(databaseUrl(s, sec, { database: REPLICA_DATABASE_ALIAS }))}, pool ${s.passedEnv.DATABASE_POOL_MAX ?? APP_POOL_MAX} each${Object.keys(s.passedEnv).length ? `, ${Object.entries(s.passedEnv).map(([k, v]) => `${k}=${v}`).join(' ')}` : ''}`);
  if (primary !== undefined) console.log(`  Replication: ${await replicationStatus(s, sec)}`);
  if (haproxy !== undefined) {
    const servers = await serverStats(s).catch(() => []);
    console.log(`  HAProxy sees: ${servers.map((sv) => `${sv.name} ${sv.status} (${sv.total} requests)`).join(', ')}`);
    // When no instance is ready, requests go to the live ones (scripts/cluster/haproxy.ts).
    if (servers.length > 0 && servers.every((sv) => sv.status !== 'UP')) {
      const live = await serverStats(s, LIVE_BACKEND).catch(() => []);
      console.log(`  No instance is ready: requests go to the live ones: ${live.map((sv) => `${sv.name} ${sv.status}`).join(', ') || 'none'}`);
    }
  }
  if (pgb !== undefined) {
    try {
      const pools = pgbouncerShow(s, sec, 'POOLS').filter((p) => p.database !== 'pgbouncer');
      console.log(
        `  PgBouncer pools: ${pools.map((p) => `${p.database}/${p.user}: ${p.cl_active} clients active, ${p.cl_waiting} waiting, ${p.sv_active} server active, ${p.sv_idle} idle`).join('; ') || 'none yet'}`,
      );
    } catch (error) {
      console.log(`  PgBouncer pools: unknown (${(error as Error).message.split('\n')[0]})`);
    }
  }
  return haproxy !== undefined;
}

/** Shell lines with the cluster's URLs, passwords included: `eval "$(npm run -s cluster -- env)"`. */
export function env(): void {
  const s = readState();
  if (!s) throw new Error(`no cluster in ${stateDir()} (npm run cluster)`);
  const sec = secrets(s.dir);
  const lines = {
    CLUSTER_URL: balancerUrl(s),
    // The primary directly, as db:seed and apikey use it.
    DATABASE_URL: databaseUrl(s, sec, { through: 'primary' }),
    CLUSTER_PGBOUNCER_URL: databaseUrl(s, sec),
    CLUSTER_REPLICA_URL: databaseUrl(s, sec, { through: 'replica' }),
    CLUSTER_ADMIN_URL: databaseUrl(s, sec, { role: 'admin', through: 'primary', database: 'postgres' }),
    REDIS_URL: redisUrl(s, sec),
  };
  for (const [k, v] of Object.entries(lines)) console.log(`export ${k}='${v}'`);
}

/** Whether the state directory has a cluster whose balancer is running. */
export function isUp(): boolean {
  const s = readState();
  return s !== undefined && haproxyPid(s) !== undefined && existsSync(path.join(s.dir, 'secrets.json'));
}
