import { readFileSync } from 'node:fs';
import path from 'node:path';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_USERS } from '@/db/seed/demo';
import { LATEST_MIGRATION } from '@/db/queries/migrations';
import type { ReadinessReport } from '@/server/health/types';
import { LIVE_BACKEND, serverStats } from '@/scripts/cluster/haproxy';
import { instanceNumbers, instancePort, startInstance, stopInstance } from '@/scripts/cluster/instances';
import { databaseUrl, paths, redisUrl } from '@/scripts/cluster/layout';
import { ensurePrograms, type Programs } from '@/scripts/cluster/packages';
import { ensurePrimary, primaryPid, stopPostgres } from '@/scripts/cluster/postgres';
import { portOpen, sleep } from '@/scripts/cluster/processes';
import { redisPid, startRedis, stopRedis } from '@/scripts/cluster/redis';
import { startTcpProxy } from '../reliability/support/tcp-proxy';
import { cluster, mintKey, request, revokeKey, type Answer, type Cluster } from './support';

/**
 * The health endpoints on the cluster, and what HAProxy does with them: it checks each
 * instance's readiness (GET /api/health/ready) every second, takes an instance that is not
 * ready out of rotation and back when it is, and when no instance is ready (a part they all
 * share is down) sends requests to the live ones (GET /api/health) instead of refusing
 * them all. Redis and the primary are stopped under load: each instance's readiness must
 * say so within 2 s and recover within 2 s, and liveness stays 200 throughout.
 */

/** How soon readiness must follow a fault and a recovery (issue 22). */
const WITHIN_MS = 2_000;
/** HAProxy: a check a second, out after two failures, back after two successes, plus the app's 1 s cache. */
const BALANCER_MS = 6_000;

let c: Cluster;
let programs: Programs;
const keys: { key: string; id: string }[] = [];

beforeAll(async () => {
  c = cluster();
  programs = ensurePrograms(() => {});
  keys.push(...(await Promise.all([1, 2, 3].map((i) => mintKey(c, DEMO_USERS.bob.email, `cluster health ${i}`)))));
});

afterAll(async () => {
  // Whatever a failed test left stopped is started again: the files after this one need it.
  if (redisPid(c.state) === undefined) await startRedis(c.state, c.secrets, programs);
  if (primaryPid(c.state) === undefined) await ensurePrimary(c.state, c.secrets, programs, () => {});
  await Promise.all(keys.map((k) => revokeKey(c, k.id).catch(() => {})));
});

const ports = () => instanceNumbers(c.state).map((n) => instancePort(c.state, n));

/** One instance's own answer, on its port (not through the balancer). */
async function direct(port: number, pathName: string): Promise<{ status: number; body: string }> {
  try {
    const res = await fetch(`http://127.0.0.1:${port}${pathName}`, { signal: AbortSignal.timeout(3_000) });
    return { status: res.status, body: await res.text() };
  } catch (error) {
    return { status: 0, body: String((error as Error).name) };
  }
}

interface Sample {
  at: number;
  port: number;
  path: '/api/health' | '/api/health/ready';
  status: number;
  failing?: string[];
}

/** Polls every instance's liveness and readiness every 100 ms until stopped. */
function monitor() {
  const samples: Sample[] = [];
  let running = true;
  const loops = ports().flatMap((port) =>
    (['/api/health', '/api/health/ready'] as const).map(async (p) => {
      while (running) {
        const { status, body } = await direct(port, p);
        const failing = p === '/api/health/ready' && status === 503 ? (JSON.parse(body) as ReadinessReport).failing : undefined;
        samples.push({ at: Date.now(), port, path: p, status, failing });
        await sleep(100);
      }
    }),
  );
  return {
    samples,
    /** When each instance's readiness first answered `status` after `since` (ms after since; null if never). */
    firstReadiness(status: number, since: number): (number | null)[] {
      return ports().map((port) => {
        const hit = samples.find((s) => s.port === port && s.path === '/api/health/ready' && s.at >= since && s.status === status);
        return hit ? hit.at - since : null;
      });
    },
    async stop() {
      running = false;
      await Promise.all(loops);
    },
  };
}

/** API requests through the balancer, a few at a time, until stopped. */
function load() {
  const answers: (Answer | { status: 0; error: string; receivedAt: number; servedBy: undefined })[] = [];
  let running = true;
  const loops = keys.map(async ({ key }) => {
    while (running) {
      try {
        answers.push(await request(c, '/api/v1/contracts?limit=5', { headers: { 'x-api-key': key } }));
      } catch (error) {
        answers.push({ status: 0, error: (error as Error).message, receivedAt: Date.now() / 1000, servedBy: undefined });
      }
      await sleep(50);
    }
  });
  return {
    answers,
    async stop() {
      running = false;
      await Promise.all(loops);
    },
  };
}

/**
 * Polls until the primary answers a query through PgBouncer as the app's role, on a new
 * connection each time: the database is back for the app only then (PgBouncer refuses
 * logins for server_login_retry after a failed one, and Postgres refuses them while it
 * starts up). The moment it did.
 */
async function whenDatabaseAnswers(): Promise<number> {
  for (;;) {
    // No array types fetched at connect: that fetch, refused by PgBouncer, would be an unhandled rejection.
    const sql = postgres(databaseUrl(c.state, c.secrets), { max: 1, prepare: false, connect_timeout: 1, fetch_types: false, onnotice: () => {} });
    try {
      await sql`SELECT 1`;
      return Date.now();
    } catch {
      await sleep(50);
    } finally {
      await sql.end({ timeout: 1 });
    }
  }
}

/** Polls until `port` accepts connections; the moment it did. */
async function whenOpen(port: number): Promise<number> {
  while (!(await portOpen(port, 200))) await sleep(20);
  return Date.now();
}

async function waitFor(check: () => Promise<boolean>, timeoutMs: number, what: string): Promise<number> {
  const started = Date.now();
  while (!(await check())) {
    if (Date.now() - started > timeoutMs) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await sleep(100);
  }
  return Date.now() - started;
}

/**
 * Waits until 22 concurrent reads through the balancer all answer 200 or 429 (at most
 * 60 s), so that the files after this one meet a settled cluster; returns how long.
 * For a few seconds after the primary is back, an occasional request still gets a 503
 * (08P01 from PgBouncer) although readiness is back.
 */
async function settled(): Promise<number> {
  const started = Date.now();
  for (;;) {
    const answers = await Promise.all(Array.from({ length: 22 }, (_, i) => request(c, '/api/v1/contracts?limit=1', { headers: { 'x-api-key': keys[i % keys.length]!.key } })));
    if (answers.every((a) => a.status === 200 || a.status === 429)) return Date.now() - started;
    if (Date.now() - started > 60_000) throw new Error(`the cluster did not settle: ${answers.map((a) => a.status).join(',')}`);
    await sleep(500);
  }
}

const haproxyStatus = async (name: string) => (await serverStats(c.state)).find((sv) => sv.name === name)?.status ?? '';
const allInRotation = async () => (await serverStats(c.state)).every((sv) => sv.status === 'UP');
const noneInRotation = async () => (await serverStats(c.state)).every((sv) => sv.status.startsWith('DOWN'));

describe('readiness on the cluster', () => {
  it('every instance is ready: database, migrations, Redis and the replica, each with its time; HAProxy checks it', async () => {
    expect(readFileSync(path.join(paths(c.state).haproxyDir, 'haproxy.cfg'), 'utf8')).toContain('http-check send meth GET uri /api/health/ready');
    for (const port of ports()) {
      // The replica may still be coming back after an earlier file's restart: wait for it.
      await waitFor(async () => JSON.parse((await direct(port, '/api/health/ready')).body).status === 'ok', 15_000, `instance on ${port} ready`);
      const { status, body } = await direct(port, '/api/health/ready');
      expect(status).toBe(200);
      const report = JSON.parse(body) as ReadinessReport;
      expect(report.checks).toMatchObject({
        database: { status: 'ok', duration_ms: expect.any(Number) },
        migrations: { status: 'ok', applied: LATEST_MIGRATION.tag, expected: LATEST_MIGRATION.tag },
        rate_limit_store: { status: 'ok', store: 'redis' },
        replica: { status: 'ok' },
      });
      // Nothing of the cluster's passwords or URLs.
      for (const secret of [c.secrets.appPassword, c.secrets.redisPassword, c.secrets.adminPassword]) expect(body).not.toContain(secret);
      expect(body).not.toContain('://');
    }
    const live = await request(c, '/api/health');
    expect(live.status).toBe(200);
    expect(JSON.parse(live.body)).toEqual({ status: 'ok' });
  });

  it('takes an instance whose readiness fails out of rotation, and back once it is ready again', async () => {
    // Instance 3 alone reaches Redis through a proxy the test can cut.
    const n = 3;
    const name = `app${n}`;
    const port = instancePort(c.state, n);
    const proxy = await startTcpProxy({ host: '127.0.0.1', port: c.state.ports.redis });
    const proxied = redisUrl(c.state, c.secrets).replace(`:${c.state.ports.redis}`, `:${proxy.port}`);
    await stopInstance(c.state, n);
    try {
      await startInstance({ ...c.state, passedEnv: { ...c.state.passedEnv, REDIS_URL: proxied } }, c.secrets, n);
      await waitFor(async () => (await haproxyStatus(name)) === 'UP', 30_000, `${name} in rotation`);

      await proxy.cut();
      const cutAt = Date.now();
      const notReadyAfter = await waitFor(async () => (await direct(port, '/api/health/ready')).status === 503, WITHIN_MS, `${name} not ready`);
      const { body } = await direct(port, '/api/health/ready');
      expect((JSON.parse(body) as ReadinessReport).failing).toEqual(['rate_limit_store']);
      await waitFor(async () => (await haproxyStatus(name)).startsWith('DOWN'), BALANCER_MS, `${name} out of rotation`);
      const outAfter = Date.now() - cutAt;

      // Out of rotation but alive: the others serve everything.
      expect((await direct(port, '/api/health')).status).toBe(200);
      const answers = await Promise.all(Array.from({ length: 30 }, () => request(c, '/api/v1/openapi.json')));
      expect(answers.map((a) => a.status)).toEqual(answers.map(() => 200));
      expect(answers.filter((a) => a.servedBy === name)).toHaveLength(0);
      expect(new Set(answers.map((a) => a.servedBy)).size).toBe(2);

      await proxy.restore();
      const restoredAt = Date.now();
      const readyAfter = await waitFor(async () => (await direct(port, '/api/health/ready')).status === 200, WITHIN_MS, `${name} ready again`);
      await waitFor(async () => (await haproxyStatus(name)) === 'UP', BALANCER_MS, `${name} back in rotation`);
      const backAfter = Date.now() - restoredAt;
      const again = await Promise.all(Array.from({ length: 30 }, () => request(c, '/api/v1/openapi.json')));
      expect(again.some((a) => a.servedBy === name)).toBe(true);
      console.log(`[health] one instance: not ready ${notReadyAfter} ms after its Redis was cut, out of HAProxy after ${outAfter} ms; ready ${readyAfter} ms after, back in HAProxy ${backAfter} ms after it was restored`);
    } finally {
      await stopInstance(c.state, n);
      await startInstance(c.state, c.secrets, n);
      await proxy.close();
      await waitFor(allInRotation, 30_000, 'every instance in rotation');
    }
  }, 600_000);

  it('Redis stopped under load: not ready within 2 s, ready within 2 s of its restart, live throughout; the live instances serve meanwhile', async () => {
    await waitFor(allInRotation, 30_000, 'every instance in rotation');
    const watch = monitor();
    const traffic = load();
    let stoppedAt = 0;
    let openAt = 0;
    let allOutAt = 0;
    try {
      await sleep(1_500);
      stoppedAt = Date.now();
      await stopRedis(c.state);
      await waitFor(async () => watch.firstReadiness(503, stoppedAt).every((t) => t !== null), 5_000, 'every instance not ready');
      await waitFor(noneInRotation, BALANCER_MS, 'every instance out of the ready backend');
      allOutAt = Date.now();
      // No instance ready: requests go to the live ones (backend app_live) for a while.
      await sleep(2_000);
      expect((await serverStats(c.state, LIVE_BACKEND)).every((sv) => sv.status === 'UP')).toBe(true);
      const starting = startRedis(c.state, c.secrets, programs);
      openAt = await whenOpen(c.state.ports.redis);
      await starting;
      await waitFor(async () => watch.firstReadiness(200, openAt).every((t) => t !== null), 5_000, 'every instance ready again');
      await waitFor(allInRotation, BALANCER_MS, 'every instance back in rotation');
    } finally {
      await traffic.stop();
      await watch.stop();
      if (redisPid(c.state) === undefined) await startRedis(c.state, c.secrets, programs);
    }
    const down = watch.firstReadiness(503, stoppedAt);
    const up = watch.firstReadiness(200, openAt);
    console.log(`[health] Redis stopped: not ready after ${down.join(', ')} ms; Redis accepting again: ready after ${up.join(', ')} ms`);
    expect(down.every((t) => t !== null && t <= WITHIN_MS), `not ready after ${down.join(', ')} ms`).toBe(true);
    expect(up.every((t) => t !== null && t <= WITHIN_MS), `ready again after ${up.join(', ')} ms`).toBe(true);
    const readinessWhileDown = watch.samples.filter((s) => s.path === '/api/health/ready' && s.at >= stoppedAt + WITHIN_MS && s.at < openAt);
    expect(readinessWhileDown.every((s) => s.status === 503 && s.failing?.includes('rate_limit_store'))).toBe(true);
    const liveness = watch.samples.filter((s) => s.path === '/api/health');
    expect(liveness.length).toBeGreaterThan(30);
    expect(liveness.filter((s) => s.status !== 200)).toEqual([]);
    // Rate limits fail open without Redis: every request was answered, none with a 5xx.
    expect(traffic.answers.filter((a) => a.status === 0 || a.status >= 500).map((a) => `${a.status} ${'error' in a ? a.error : a.body.slice(0, 120)}`)).toEqual([]);
    const whileNoneReady = traffic.answers.filter((a) => a.receivedAt * 1000 > allOutAt && a.receivedAt * 1000 < openAt);
    expect(whileNoneReady.length).toBeGreaterThan(0);
  }, 300_000);

  it('the primary stopped under load: not ready (database) within 2 s, ready within 2 s of its restart, live throughout', async () => {
    await waitFor(allInRotation, 30_000, 'every instance in rotation');
    const watch = monitor();
    const traffic = load();
    let stoppedAt = 0;
    let openAt = 0;
    try {
      await sleep(1_500);
      stoppedAt = Date.now();
      await stopPostgres(c.state, 'primary', programs);
      await waitFor(async () => watch.firstReadiness(503, stoppedAt).every((t) => t !== null), 5_000, 'every instance not ready');
      await sleep(2_000);
      const starting = ensurePrimary(c.state, c.secrets, programs, () => {});
      openAt = await whenDatabaseAnswers();
      await starting;
      await waitFor(async () => watch.firstReadiness(200, openAt).every((t) => t !== null), 10_000, 'every instance ready again');
      await waitFor(allInRotation, BALANCER_MS, 'every instance back in rotation');
    } finally {
      await traffic.stop();
      await watch.stop();
      if (primaryPid(c.state) === undefined) await ensurePrimary(c.state, c.secrets, programs, () => {});
    }
    const settledAfter = await settled();
    const down = watch.firstReadiness(503, stoppedAt);
    const up = watch.firstReadiness(200, openAt);
    console.log(`[health] primary stopped: not ready after ${down.join(', ')} ms; primary answering through PgBouncer again: ready after ${up.join(', ')} ms; 22 concurrent reads all 200 ${settledAfter} ms after`);
    expect(down.every((t) => t !== null && t <= WITHIN_MS), `not ready after ${down.join(', ')} ms`).toBe(true);
    expect(up.every((t) => t !== null && t <= WITHIN_MS), `ready again after ${up.join(', ')} ms`).toBe(true);
    const failing = watch.samples.filter((s) => s.path === '/api/health/ready' && s.status === 503).map((s) => s.failing ?? []);
    // The database's parts only (the two statements can meet the outage's edge apart: one answered, one refused).
    expect(failing.filter((parts) => parts.length === 0 || parts.some((part) => part !== 'database' && part !== 'migrations'))).toEqual([]);
    expect(failing.some((parts) => parts.includes('database'))).toBe(true);
    const liveness = watch.samples.filter((s) => s.path === '/api/health');
    expect(liveness.filter((s) => s.status !== 200)).toEqual([]);
    // Without the database the instances answer 503 with Retry-After themselves; nothing is lost or cut.
    const bad = traffic.answers.filter((a) => a.status === 0 || (a.status >= 500 && !(a.status === 503 && 'headers' in a && a.headers['retry-after'])));
    expect(bad.map((a) => `${a.status} ${'error' in a ? a.error : a.body.slice(0, 120)}`)).toEqual([]);
  }, 300_000);
});
