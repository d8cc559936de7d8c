import { createServer, type AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { openPostgres, type DatabaseHandle } from '@/db/client';
import { LATEST_MIGRATION } from '@/db/queries/migrations';
import { GET as liveness, HEAD as livenessHead } from '@/app/api/health/route';
import { GET as readiness, HEAD as readinessHead } from '@/app/api/health/ready/route';
import { setProcessDatabase } from '@/server/database';
import { resetProcessReadiness } from '@/server/health/readiness';
import type { ReadinessReport } from '@/server/health/types';
import { applyConfig, restoreConfig } from '../helpers/config';
import { countDatabaseCalls } from '../helpers/database-calls';
import { createTestDatabase, describeDriver } from '../helpers/db';
import { migrationsBefore } from '../helpers/migrations-before';
import { startUpstashProxy } from '../helpers/upstash-proxy';
import { redisReachable, TEST_REDIS_URL } from '../rate-limit/support';
import { startTcpProxy, type TcpProxy } from '../reliability/support/tcp-proxy';
import { captureLogs, type CapturedLogs, type LogEntry } from '../helpers/logs';

/**
 * GET /api/health (liveness) and GET /api/health/ready (readiness), through their App
 * Router route modules, on the embedded PGlite database or Postgres (DATABASE_URL), with
 * the rate-limit store in memory, on a real Redis (REDIS_URL, else TEST_REDIS_URL), behind
 * a real Upstash-compatible REST proxy, or unreachable. Run both ways:
 *   npx vitest run tests/server/health.test.ts
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres REDIS_URL=redis://127.0.0.1:6379 npx vitest run tests/server/health.test.ts
 */

// Secrets that the unreachable parts are configured with: no body may ever show them.
const DB_PASSWORD = 'db-pass-5e4f2a91c7';
const REDIS_PASSWORD = 'redis-pass-83b0e2d14f';
const UPSTASH_TOKEN = 'upstash-token-a7c19e3b55';
const SECRETS = [DB_PASSWORD, REDIS_PASSWORD, UPSTASH_TOKEN];
const REDIS_URL = process.env.REDIS_URL ?? TEST_REDIS_URL;

const BASE = 'http://localhost:3000';
const bodies: string[] = [];

async function call(route: (req: Request) => Response | Promise<Response>, path: string, method = 'GET') {
  const started = performance.now();
  const res = await route(new Request(`${BASE}${path}`, { method }));
  const text = await res.text();
  bodies.push(text);
  return { status: res.status, headers: res.headers, text, ms: performance.now() - started };
}

async function ready() {
  const answer = await call(readiness, '/api/health/ready');
  return { ...answer, report: JSON.parse(answer.text) as ReadinessReport };
}

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

/** A Postgres pool to `port`, with a password in its URL (nothing answers there, or a proxy does). */
const pool = (port: number) => openPostgres(`postgres://cda:${DB_PASSWORD}@127.0.0.1:${port}/cda`, { max: 2, prepare: false });

let handle: DatabaseHandle & { url?: string };
let redisUp = false;
const logged: string[] = [];
let logs: CapturedLogs | undefined;

/** The configuration of a fresh process: the limiter and the readiness cache start over. */
async function configure(env: Record<string, string | undefined>) {
  await applyConfig({ REDIS_URL: undefined, UPSTASH_REDIS_REST_URL: undefined, UPSTASH_REDIS_REST_TOKEN: undefined, KV_REST_API_URL: undefined, KV_REST_API_TOKEN: undefined, ...env });
  resetProcessReadiness();
}

beforeAll(async () => {
  [handle, redisUp] = await Promise.all([createTestDatabase(), redisReachable(REDIS_URL)]);
  setProcessDatabase(handle);
  logs = captureLogs('info', logged);
});

afterEach(() => setProcessDatabase(handle));

afterAll(async () => {
  vi.restoreAllMocks();
  logs?.restore();
  await restoreConfig();
  resetProcessReadiness();
  await handle?.close();
  // Nothing of a secret, a connection string or a stack in any answer or log line.
  const everything = [...bodies, ...logged].join('\n');
  for (const secret of SECRETS) expect(everything).not.toContain(secret);
  expect(bodies.join('\n')).not.toMatch(/:\/\/|127\.0\.0\.1|\n\s+at /);
});

describe(`liveness, GET /api/health (${describeDriver()})`, () => {
  it('answers 200 {"status":"ok"} with the database and Redis unreachable, without calling either', async () => {
    const port = await closedPort();
    await configure({ REDIS_URL: `redis://:${REDIS_PASSWORD}@127.0.0.1:${port}` });
    const unreachable = await pool(port);
    setProcessDatabase(unreachable);
    const calls = countDatabaseCalls(unreachable.db);
    try {
      for (let i = 0; i < 20; i++) {
        const answer = await call(liveness, '/api/health');
        expect(answer.status).toBe(200);
        expect(JSON.parse(answer.text)).toEqual({ status: 'ok' });
        expect(answer.headers.get('cache-control')).toBe('no-store');
        expect(answer.headers.get('content-type')).toMatch(/^application\/json/);
      }
      const head = await call(livenessHead, '/api/health', 'HEAD');
      expect(head.status).toBe(200);
      expect(head.text).toBe('');
      expect(calls.count).toBe(0);
      // Not even the rate limiter (and its Redis connection) was built.
      expect((globalThis as Record<symbol, unknown>)[Symbol.for('contract-data-api.rate-limiter')]).toBeUndefined();
    } finally {
      calls.restore();
      await unreachable.close();
    }
  });
});

describe(`readiness, GET /api/health/ready (${describeDriver()})`, () => {
  it('answers 200 with each part, its state and its time (rate limits in memory, no replica)', async () => {
    await configure({});
    const { status, headers, report } = await ready();
    expect(status).toBe(200);
    expect(headers.get('cache-control')).toBe('no-store');
    expect(report.status).toBe('ok');
    expect(report.failing).toBeUndefined();
    expect(Date.now() - Date.parse(report.checked_at)).toBeLessThan(5_000);
    expect(report.checks.database).toMatchObject({ status: 'ok', duration_ms: expect.any(Number) });
    expect(report.checks.migrations).toMatchObject({ status: 'ok', applied: LATEST_MIGRATION.tag, expected: LATEST_MIGRATION.tag });
    expect(LATEST_MIGRATION.tag).toMatch(/^\d{4}_/);
    expect(report.checks.rate_limit_store).toMatchObject({ status: 'not_configured', store: 'memory' });
    expect(report.checks.replica).toMatchObject({ status: 'not_configured' });
    const head = await call(readinessHead, '/api/health/ready', 'HEAD');
    expect(head.status).toBe(200);
    expect(head.text).toBe('');
  });

  it.skipIf(!process.env.REDIS_URL)('answers 200 with Redis as the rate-limit store', async () => {
    expect(redisUp, `Redis at ${REDIS_URL}`).toBe(true);
    await configure({ REDIS_URL });
    const { status, report } = await ready();
    expect(status, JSON.stringify(report)).toBe(200);
    expect(report.checks.rate_limit_store).toMatchObject({ status: 'ok', store: 'redis' });
  });

  it('answers 503 naming rate_limit_store when Redis is unreachable, within the 1 s budget', async () => {
    const port = await closedPort();
    await configure({ REDIS_URL: `redis://:${REDIS_PASSWORD}@127.0.0.1:${port}` });
    const { status, headers, report, ms } = await ready();
    expect(status).toBe(503);
    expect(headers.get('retry-after')).toBe('1');
    expect(report.status).toBe('unavailable');
    expect(report.failing).toEqual(['rate_limit_store']);
    expect(report.checks.rate_limit_store).toMatchObject({ status: 'failing', store: 'redis', error: expect.stringMatching(/^[A-Za-z0-9_]+$/) });
    expect(report.checks.database.status).toBe('ok');
    expect(ms).toBeLessThan(1_500);
  });

  it('answers 503 naming rate_limit_store when Redis accepts connections but never answers (timeout)', async () => {
    const proxy = await startTcpProxy({ host: '127.0.0.1', port: await closedPort() });
    try {
      await proxy.blackhole();
      await configure({ REDIS_URL: `redis://:${REDIS_PASSWORD}@127.0.0.1:${proxy.port}` });
      const { status, report, ms } = await ready();
      expect(status).toBe(503);
      expect(report.failing).toEqual(['rate_limit_store']);
      expect(ms).toBeLessThan(1_500);
    } finally {
      await proxy.close();
    }
  });

  it.skipIf(!process.env.REDIS_URL)('checks Upstash over REST: 200 when it answers, 503 when it does not', async () => {
    expect(redisUp, `Redis at ${REDIS_URL}`).toBe(true);
    const upstash = await startUpstashProxy({ redisUrl: REDIS_URL, token: UPSTASH_TOKEN });
    try {
      // Vercel's Upstash integration names them KV_REST_API_*.
      await configure({ KV_REST_API_URL: upstash.url, KV_REST_API_TOKEN: UPSTASH_TOKEN });
      const up = await ready();
      expect(up.status, up.text).toBe(200);
      expect(up.report.checks.rate_limit_store).toMatchObject({ status: 'ok', store: 'upstash' });
    } finally {
      await upstash.close();
    }
    await configure({ UPSTASH_REDIS_REST_URL: `http://127.0.0.1:${await closedPort()}`, UPSTASH_REDIS_REST_TOKEN: UPSTASH_TOKEN });
    const down = await ready();
    expect(down.status).toBe(503);
    expect(down.report.checks.rate_limit_store).toMatchObject({ status: 'failing', store: 'upstash' });
  });

  it('answers 503 naming migrations when the database is behind the build', async () => {
    await configure({});
    const before = migrationsBefore(LATEST_MIGRATION.idx);
    const older = await createTestDatabase({ migrationsFolder: before.folder });
    try {
      setProcessDatabase(older);
      const { status, report } = await ready();
      expect(status).toBe(503);
      expect(report.failing).toEqual(['migrations']);
      expect(report.checks.migrations).toMatchObject({ status: 'failing', error: 'behind', expected: LATEST_MIGRATION.tag });
      expect(report.checks.migrations.applied).toMatch(/^\d{4}_/);
      expect(report.checks.migrations.applied).not.toBe(LATEST_MIGRATION.tag);
      expect(report.checks.database.status).toBe('ok');
    } finally {
      setProcessDatabase(handle);
      await older.close();
      before.remove();
    }
  });

  it('answers 503 naming the database (and the migrations it cannot read) when the database refuses connections', async () => {
    await configure({});
    const down = await pool(await closedPort());
    try {
      setProcessDatabase(down);
      const { status, report, ms } = await ready();
      expect(status).toBe(503);
      expect(report.failing).toEqual(['database', 'migrations']);
      expect(report.checks.database).toMatchObject({ status: 'failing', error: 'ECONNREFUSED' });
      expect(ms).toBeLessThan(1_500);
    } finally {
      await down.close();
    }
  });

  it('answers 503 within about a second when the database accepts connections but never answers', async () => {
    await configure({});
    const proxy: TcpProxy = await startTcpProxy({ host: '127.0.0.1', port: await closedPort() });
    const hung = await pool(proxy.port);
    try {
      await proxy.blackhole();
      setProcessDatabase(hung);
      const { status, report, ms } = await ready();
      expect(status).toBe(503);
      expect(report.checks.database).toMatchObject({ status: 'failing', error: 'timeout' });
      expect(report.checks.database.duration_ms).toBeGreaterThanOrEqual(990);
      expect(ms).toBeLessThan(1_500);
    } finally {
      await proxy.close();
      await hung.close();
    }
  });

  it('is degraded (still 200) while a configured replica is left out', async () => {
    await configure({ DATABASE_REPLICA_MAX_LAG_MS: '400' });
    const replica = await pool(await closedPort());
    try {
      setProcessDatabase(handle, replica);
      await vi.waitFor(
        async () => {
          resetProcessReadiness();
          const { report } = await ready();
          expect(report.checks.replica).toMatchObject({ status: 'degraded', reason: 'unreachable' });
        },
        { timeout: 5_000, interval: 200 },
      );
      const { status, report } = await ready();
      expect(status).toBe(200);
      expect(report.status).toBe('degraded');
    } finally {
      setProcessDatabase(handle);
      await replica.close();
    }
  });

  it.skipIf(!process.env.DATABASE_URL)('is ok with a replica in use (Postgres)', async () => {
    await configure({ DATABASE_REPLICA_MAX_LAG_MS: '400' });
    // Another pool on the same database: no standby, so no lag; in use after its first probe.
    const replica = await openPostgres(handle.url!, { max: 2 });
    try {
      setProcessDatabase(handle, replica);
      await vi.waitFor(
        async () => {
          resetProcessReadiness();
          const { report } = await ready();
          expect(report.checks.replica).toMatchObject({ status: 'ok' });
          expect(report.status).toBe('ok');
        },
        { timeout: 5_000, interval: 200 },
      );
    } finally {
      setProcessDatabase(handle);
      await replica.close();
    }
  });

  it('reaches the database once per second however often it is asked, with one check in flight for concurrent callers', async () => {
    await configure({});
    const calls = countDatabaseCalls(handle.db);
    try {
      const first = await ready();
      expect(first.status).toBe(200);
      const perCheck = calls.count;
      expect(perCheck).toBeGreaterThan(0);

      // Within the second: the same answer, no database call.
      const again = await ready();
      expect(again.report.checked_at).toBe(first.report.checked_at);
      expect(calls.count).toBe(perCheck);

      // After a second: checked again, once.
      await new Promise((resolve) => setTimeout(resolve, 1_050));
      const later = await ready();
      expect(later.report.checked_at).not.toBe(first.report.checked_at);
      expect(calls.count).toBe(2 * perCheck);

      // A flood after the next second: 200 concurrent callers share one check.
      await new Promise((resolve) => setTimeout(resolve, 1_050));
      const flood = await Promise.all(Array.from({ length: 200 }, () => ready()));
      expect(new Set(flood.map((a) => a.report.checked_at)).size).toBe(1);
      expect(flood.every((a) => a.status === 200)).toBe(true);
      expect(calls.count).toBe(3 * perCheck);
    } finally {
      calls.restore();
    }
  });

  it('logs one line when readiness changes, not one per check', async () => {
    const port = await closedPort();
    await configure({ REDIS_URL: `redis://:${REDIS_PASSWORD}@127.0.0.1:${port}` });
    logged.length = 0;
    const first = await ready();
    expect(first.status).toBe(503);
    await new Promise((resolve) => setTimeout(resolve, 1_050));
    expect((await ready()).status).toBe(503);
    const lines = logged.map((line) => JSON.parse(line) as LogEntry).filter((entry) => entry.msg === 'readiness changed');
    expect(lines).toHaveLength(1);
    expect(lines[0]!.level).toBe('warn');
    expect(lines[0]!.readiness).toMatch(/^\[health\] readiness unavailable: rate_limit_store failing \([A-Za-z0-9_]+\)$/);
  });
});
