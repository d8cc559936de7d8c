import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, openSync, readFileSync, closeSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { APP_POOL_MAX, databaseUrl, paths, REPLICA_DATABASE_ALIAS, redisUrl, type Secrets, type State } from './layout';
import { portOpen, sleep, startTime, stopPid, tail, waitUntil } from './processes';

/**
 * The app instances: `next start` of one production build, each on its own port, all on
 * the same PgBouncer, replica and Redis, with the same AUTH_SECRET. They trust the client
 * address the balancer appends to X-Forwarded-For (TRUSTED_PROXY_HOPS=1) and are reached
 * only through it (they listen on loopback).
 */

export const PROJECT_ROOT = path.resolve(import.meta.dirname, '..', '..');
const NEXT_BIN = path.join(PROJECT_ROOT, 'node_modules', 'next', 'dist', 'bin', 'next');

/** Variables the caller of `up` may set for the instances (limits, pool size, deadlines). */
export const PASSED_ENV = /^(RATE_LIMIT_[A-Z_]+|DATABASE_POOL_MAX|DATABASE_STATEMENT_TIMEOUT_MS|REQUEST_DEADLINE_MS)$/;

const buildInfoFile = (s: State) => path.join(paths(s).appDir, 'build.json');
const pidFile = (s: State, n: number) => path.join(paths(s).appDir, `instance-${n}.pid`);
export const instanceLog = (s: State, n: number) => path.join(paths(s).appDir, `instance-${n}.log`);
/** Instance numbers start at 1; HAProxy calls them app1, app2, app3. */
export const instanceNumbers = (s: State) => s.ports.instances.map((_, i) => i + 1);
export const instancePort = (s: State, n: number) => s.ports.instances[n - 1]!;

function gitCommit(): string | undefined {
  const r = spawnSync('git', ['rev-parse', 'HEAD'], { cwd: PROJECT_ROOT, encoding: 'utf8' });
  return r.status === 0 ? r.stdout.trim() : undefined;
}

/** Whether what the build is made of differs between `commit` and the working tree. */
function appChangedSince(commit: string): boolean {
  const sources = ['app', 'components', 'server', 'db', 'next.config.mjs', 'package-lock.json', 'instrumentation.ts'];
  return spawnSync('git', ['diff', '--quiet', commit, '--', ...sources], { cwd: PROJECT_ROOT }).status !== 0;
}

const distPath = (s: State) => path.resolve(PROJECT_ROOT, s.distDir);

/** Builds the app into the cluster's build directory when there is no build there (or `force`). */
export function ensureBuild(s: State, force: boolean, log: (line: string) => void): void {
  const commit = gitCommit();
  if (!force && existsSync(path.join(distPath(s), 'BUILD_ID'))) {
    const info = existsSync(buildInfoFile(s)) ? (JSON.parse(readFileSync(buildInfoFile(s), 'utf8')) as { commit?: string }) : {};
    if (info.commit && commit && info.commit !== commit && appChangedSince(info.commit)) {
      log(`note: the app changed since the build in ${s.distDir} (commit ${info.commit.slice(0, 8)}): npm run cluster -- down, then up --rebuild`);
    }
    return;
  }
  log(`building the app into ${s.distDir} (next build, about a minute)…`);
  const started = Date.now();
  // next build adds "<dist dir>/types/**/*.ts" to tsconfig.json's include (and reformats
  // it) for any build directory other than .next: put the committed file back afterwards.
  const tsconfig = path.join(PROJECT_ROOT, 'tsconfig.json');
  const tsconfigBefore = readFileSync(tsconfig, 'utf8');
  let result;
  try {
    result = spawnSync(process.execPath, [NEXT_BIN, 'build'], {
      cwd: PROJECT_ROOT,
      env: { ...process.env, NEXT_DIST_DIR: s.distDir, NEXT_TELEMETRY_DISABLED: '1', NODE_ENV: 'production' },
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
    });
  } finally {
    if (readFileSync(tsconfig, 'utf8') !== tsconfigBefore) writeFileSync(tsconfig, tsconfigBefore);
  }
  if (result.status !== 0) throw new Error(`next build failed (exit ${result.status ?? result.signal}):\n${(result.stdout + result.stderr).slice(-4000)}`);
  mkdirSync(paths(s).appDir, { recursive: true });
  writeFileSync(buildInfoFile(s), `${JSON.stringify({ commit, builtAt: new Date().toISOString() })}\n`);
  log(`built in ${Math.round((Date.now() - started) / 1000)} s`);
}

interface PidRecord {
  pid: number;
  startTime: string;
  port: number;
}

/** The pid of instance `n` when that very process (same start time) is still running. */
export function instancePid(s: State, n: number): number | undefined {
  const file = pidFile(s, n);
  if (!existsSync(file)) return undefined;
  try {
    const record = JSON.parse(readFileSync(file, 'utf8')) as PidRecord;
    return startTime(record.pid) === record.startTime ? record.pid : undefined;
  } catch {
    return undefined;
  }
}

export function instanceEnv(s: State, sec: Secrets): NodeJS.ProcessEnv {
  const keep = ['PATH', 'HOME', 'LANG', 'LC_ALL', 'TZ', 'TMPDIR'];
  const base = Object.fromEntries(keep.filter((k) => process.env[k] !== undefined).map((k) => [k, process.env[k]]));
  return {
    ...base,
    NODE_ENV: 'production',
    NEXT_DIST_DIR: s.distDir,
    NEXT_TELEMETRY_DISABLED: '1',
    DATABASE_URL: databaseUrl(s, sec),
    // The primary without PgBouncer, as Neon's integration names it: LISTEN (revocations,
    // webhook wake-ups) connects there, since a transaction pooler hears no NOTIFY for it.
    DATABASE_URL_UNPOOLED: databaseUrl(s, sec, { through: 'primary' }),
    DATABASE_PREPARE: 'false',
    DATABASE_POOL_MAX: String(APP_POOL_MAX),
    // Lists, get-one and exports read there while it is healthy (server/database.ts).
    DATABASE_REPLICA_URL: databaseUrl(s, sec, { database: REPLICA_DATABASE_ALIAS }),
    REDIS_URL: redisUrl(s, sec),
    AUTH_SECRET: sec.authSecret,
    // Production refuses to start without a way to send mail; the cluster sends none.
    MAIL_TRANSPORT: 'log',
    // HAProxy appends the address it was connected from (option forwardfor).
    TRUSTED_PROXY_HOPS: '1',
    // Prometheus scrapes each instance with it (docs/operations.md); also in metricsTokenFile(s).
    METRICS_TOKEN: metricsToken(sec),
    ...s.passedEnv,
  };
}

/**
 * The instances' METRICS_TOKEN, derived from the cluster's AUTH_SECRET (so a cluster made
 * before metrics existed gets one too), and the file Prometheus reads it from
 * (`credentials_file`), written with the other secrets' mode.
 */
const metricsToken = (sec: Secrets) => createHash('sha256').update(`metrics-token:${sec.authSecret}`).digest('base64url');
export const metricsTokenFile = (s: State) => path.join(s.dir, 'metrics-token');

/** Starts instance `n` and waits until it serves; returns its pid. */
export async function startInstance(s: State, sec: Secrets, n: number): Promise<number> {
  writeFileSync(metricsTokenFile(s), metricsToken(sec), { mode: 0o600 });
  const port = instancePort(s, n);
  if (await portOpen(port)) throw new Error(`port ${port} (instance ${n}) is taken by another program: set CLUSTER_HTTP_PORT`);
  mkdirSync(paths(s).appDir, { recursive: true });
  const out = openSync(instanceLog(s, n), 'a');
  const child = spawn(process.execPath, [NEXT_BIN, 'start', '--hostname', '127.0.0.1', '--port', String(port)], {
    cwd: PROJECT_ROOT,
    env: instanceEnv(s, sec),
    // Its own process group, so that it outlives this command and can be stopped with everything it spawns.
    detached: true,
    stdio: ['ignore', out, out],
  });
  closeSync(out);
  child.unref();
  const pid = child.pid!;
  let started: string | undefined;
  for (let i = 0; i < 50 && !started; i++) {
    started = startTime(pid);
    if (!started) await sleep(20);
  }
  if (!started) throw new Error(`instance ${n} exited at once:\n${tail(instanceLog(s, n))}`);
  writeFileSync(pidFile(s, n), `${JSON.stringify({ pid, startTime: started, port } satisfies PidRecord)}\n`);
  await waitUntil(
    async () => {
      if (startTime(pid) !== started) throw new Error(`instance ${n} stopped while starting:\n${tail(instanceLog(s, n))}`);
      try {
        const res = await fetch(`http://127.0.0.1:${port}/api/v1/openapi.json`, { signal: AbortSignal.timeout(5_000) });
        await res.arrayBuffer();
        return res.ok;
      } catch {
        return false;
      }
    },
    180_000,
    `instance ${n} did not answer on port ${port}`,
    () => tail(instanceLog(s, n)),
  );
  return pid;
}

export async function stopInstance(s: State, n: number, signal: NodeJS.Signals = 'SIGTERM'): Promise<boolean> {
  const pid = instancePid(s, n);
  if (pid === undefined) {
    rmSync(pidFile(s, n), { force: true });
    return false;
  }
  await stopPid(pid, { signal, graceMs: 15_000, group: true });
  rmSync(pidFile(s, n), { force: true });
  return true;
}
