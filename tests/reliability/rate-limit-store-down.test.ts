import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { DatabaseHandle } from '@/db/client';
import { setProcessDatabase } from '@/server/database';
import { DEMO_USERS, demoContractRows, seedDemo } from '@/db/seed/demo';
import { handleApiRequest } from '@/server/rest/router';
import { apiRequest, PROXY_CLIENT_ADDRESS, type Answer } from '../helpers/api';
import { applyConfig, restoreConfig } from '../helpers/config';
import { captureLogs, type CapturedLogs } from '../helpers/logs';
import { createTestDatabase } from '../helpers/db';
import { newApiKey } from '../helpers/tokens';
import { redisReachable, TEST_REDIS_URL } from '../rate-limit/support';
import { startTcpProxy, type TcpProxy } from './support/tcp-proxy';

/**
 * The rate-limit store is down while the API is under load: every request is still
 * served (fail open) within the store timeout, nothing answers 500, the log gets one
 * line per outage and never a key; when the store is back, limits apply again.
 *
 * The process limiter is built from the configuration at first use, so each scenario
 * applies its REDIS_URL and the limiter is built afresh.
 */

const TIMEOUT_MS = 300;
const KEYS = 3;
const PER_KEY = 65; // more than the limit of 60: only a limiter that fails open serves them all

let handle: DatabaseHandle;
const keys: string[] = [];
let closedPort: number;
let silent: Server;
const silentSockets = new Set<Socket>();
let logs: CapturedLogs;

beforeAll(async () => {
  handle = await createTestDatabase();
  setProcessDatabase(handle);
  await seedDemo(handle.db);
  for (let i = 0; i < KEYS; i++) {
    const user = Object.values(DEMO_USERS)[i % 3]!;
    keys.push((await newApiKey(handle.db, user.id, { name: `load ${i}` })).key);
  }
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  closedPort = (probe.address() as AddressInfo).port;
  await new Promise((resolve) => probe.close(resolve));
  silent = createServer((socket) => {
    silentSockets.add(socket);
    socket.on('close', () => silentSockets.delete(socket));
    socket.on('error', () => {});
  });
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  logs = captureLogs();
});

afterAll(async () => {
  await restoreConfig();
  for (const socket of silentSockets) socket.destroy();
  await new Promise((resolve) => silent.close(resolve));
  vi.restoreAllMocks();
  await handle?.close();
});

/** The API as a fresh process would serve it, with the limiter built from `env`. */
async function loadApi(env: Record<string, string | undefined>) {
  await applyConfig({ ...PROXY_CLIENT_ADDRESS, RATE_LIMIT_TIMEOUT_MS: String(TIMEOUT_MS), RATE_LIMIT_AUTH_FAILURES_PER_MINUTE: '100000', ...env });
  return async (req: Request): Promise<Answer> => {
    const started = performance.now();
    const res = await handleApiRequest(req);
    const text = await res.text();
    return { status: res.status, headers: res.headers, text, ms: performance.now() - started };
  };
}

type Send = Awaited<ReturnType<typeof loadApi>>;

/** KEYS x PER_KEY list and get-one requests, a few exports and a few bad keys, all at once. */
async function burst(send: Send) {
  const contractId = demoContractRows()[0]!.id!;
  const good: Promise<Answer>[] = [];
  keys.forEach((key, k) => {
    for (let i = 0; i < PER_KEY; i++) {
      good.push(send(apiRequest('GET', i % 2 ? '/contracts?limit=3' : `/contracts/${contractId}`, { key })));
    }
    for (let i = 0; i < 3; i++) good.push(send(apiRequest('POST', '/contracts/export', { key, body: k % 2 ? '{}' : '' })));
  });
  const bad = Array.from({ length: 10 }, (_, i) => send(apiRequest('GET', '/contracts', { key: `cdapi_wrong${i}` })));
  const started = performance.now();
  const [goodAnswers, badAnswers] = await Promise.all([Promise.all(good), Promise.all(bad)]);
  return { good: goodAnswers, bad: badAnswers, ms: performance.now() - started };
}

function expectServedWithoutLimit(result: Awaited<ReturnType<typeof burst>>) {
  const statuses = new Map<number, number>();
  for (const a of result.good) statuses.set(a.status, (statuses.get(a.status) ?? 0) + 1);
  // Every good request served (get-one may be 404 for a caller who cannot see that contract).
  expect([...statuses.keys()].every((s) => s === 200 || s === 404), JSON.stringify([...statuses])).toBe(true);
  expect(statuses.get(200)).toBeGreaterThan(KEYS * PER_KEY / 2);
  for (const a of result.good) {
    // Counts are unknown while the store is down: no invented rate-limit headers.
    expect(a.headers.get('x-ratelimit-remaining')).toBeNull();
  }
  for (const a of result.bad) expect(a.status).toBe(401);
}

describe('rate-limit store down under load', () => {
  let healthyMs = 0;
  it('baseline: the same burst with a working (in-process) store', async () => {
    const send = await loadApi({ REDIS_URL: undefined, UPSTASH_REDIS_REST_URL: undefined, UPSTASH_REDIS_REST_TOKEN: undefined });
    const result = await burst(send);
    expect(result.good.some((a) => a.status === 429)).toBe(true); // limits apply here
    healthyMs = result.ms;
  });

  it.each([
    ['Redis at a closed port (refused)', () => `redis://127.0.0.1:${closedPort}`],
    ['Redis that accepts and never answers', () => `redis://127.0.0.1:${(silent.address() as AddressInfo).port}`],
  ])('%s: every request served, none waits much longer than the timeout', async (_name, url) => {
    logs.entries.length = 0;
    logs.lines.length = 0;
    const send = await loadApi({ REDIS_URL: url() });
    const result = await burst(send);
    expectServedWithoutLimit(result);
    // The store's timeout bounds each request's wait: the burst takes what it takes with a
    // working store (the database's work for 400 requests at once) plus about the timeout.
    // The margin absorbs the 20 % of requests that the healthy run answered 429 without
    // a query, and a busy CI machine.
    expect(result.ms).toBeLessThan(healthyMs * 1.5 + TIMEOUT_MS + 1_500);
    // One warning for the whole outage, and no key in it.
    const rateLimitLines = logs.entries.filter((w) => w.msg.startsWith('rate-limit store failed'));
    expect(rateLimitLines.length).toBeGreaterThanOrEqual(1);
    expect(rateLimitLines.length).toBeLessThanOrEqual(2);
    for (const key of keys) expect(logs.lines.join('\n')).not.toContain(key);
  });
});

describe('Redis going away in the middle of traffic, and coming back', async () => {
  const reachable = await redisReachable();
  let proxy: TcpProxy;
  beforeAll(async () => {
    if (!reachable) return;
    const target = new URL(TEST_REDIS_URL);
    proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 6379) });
  });
  afterAll(async () => proxy?.close());

  it.skipIf(!reachable)('limits, then fails open while Redis is cut, then limits again once it is back', async () => {
    // A longer wait for the store than above: the exact counts before and after the cut
    // must not depend on whether a loaded machine answers 70 requests within 300 ms.
    const storeTimeoutMs = 1_500;
    const send = await loadApi({ REDIS_URL: `redis://127.0.0.1:${proxy.port}`, RATE_LIMIT_TIMEOUT_MS: String(storeTimeoutMs) });
    const freshKey = async () => (await newApiKey(handle.db, DEMO_USERS.carol.id, { name: 'redis cut' })).key;
    const list = (key: string) => send(apiRequest('GET', '/contracts?limit=1', { key }));
    const exactlyLimited = async () => {
      const key = await freshKey();
      const answers = await Promise.all(Array.from({ length: 70 }, () => list(key)));
      const servedOpen = answers.filter((a) => a.status === 200 && a.headers.get('x-ratelimit-remaining') === null);
      expect({ ok: answers.filter((a) => a.status === 200).length, limited: answers.filter((a) => a.status === 429).length, servedOpen: servedOpen.length }).toEqual({
        ok: 60,
        limited: 10,
        servedOpen: 0,
      });
    };

    await exactlyLimited();

    await proxy.cut();
    const key = await freshKey();
    const during = await Promise.all(Array.from({ length: 100 }, () => list(key)));
    expect(during.map((a) => a.status)).toEqual(Array(100).fill(200));
    expect(Math.max(...during.map((a) => a.ms))).toBeLessThan(storeTimeoutMs + 3_000);

    await proxy.restore();
    // ioredis reconnects in the background (backing off up to 0.5 s); rate-limit headers
    // come back with the first answer of the store.
    let counted = false;
    for (const started = Date.now(); !counted && Date.now() - started < 10_000; ) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      counted = (await list(key)).headers.get('x-ratelimit-remaining') !== null;
    }
    expect(counted).toBe(true);
    await exactlyLimited();
  }, 30_000);
});
