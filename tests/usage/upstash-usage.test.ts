import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '@/db/client';
import { DEMO_USERS, seedDemo } from '@/db/seed/demo';
import { clearVerifiedTokenCache } from '@/server/access/tokens';
import { setProcessDatabase } from '@/server/database';
import { processRateLimitStore } from '@/server/rate-limit';
import { apiRouteHandler } from '@/server/rest/route-handler';
import { createCallerFactory, createInnerContext } from '@/server/trpc/init';
import { internalRouter } from '@/server/trpc/root';
import { flushKeyActivity } from '@/server/usage/recorder';
import { apiRequest, PROXY_CLIENT_ADDRESS } from '../helpers/api';
import { applyConfig, restoreConfig } from '../helpers/config';
import { createTestDatabase, describeDriver } from '../helpers/db';
import { newApiKey } from '../helpers/tokens';
import { startUpstashProxy, type UpstashProxy } from '../helpers/upstash-proxy';
import { redisReachable, TEST_REDIS_URL } from '../rate-limit/support';

/**
 * Per-key usage on Vercel's store: Upstash's REST protocol (the test proxy over a real
 * Redis), as UPSTASH_REDIS_REST_URL / KV_REST_API_URL configure it. The counts go to the
 * same store as the rate limits, over HTTP, and are read back exactly.
 */

const reachable = await redisReachable();
// CI always has a Redis: there a missing one is a failure, not a skip.
if (!reachable && process.env.CI) throw new Error(`Redis is not reachable at ${TEST_REDIS_URL}`);
if (!reachable) console.warn(`SKIPPED: Redis is not reachable at ${TEST_REDIS_URL}; the Upstash case did not run.`);

let handle: DatabaseHandle;
let proxy: UpstashProxy | undefined;
const createCaller = createCallerFactory(internalRouter);
// The route handler the app serves /api/v1 with: observed, and feeding the key's usage.
const served = apiRouteHandler;

beforeAll(async () => {
  handle = await createTestDatabase();
  await seedDemo(handle.db);
  setProcessDatabase(handle);
  clearVerifiedTokenCache();
  if (reachable) proxy = await startUpstashProxy({ redisUrl: TEST_REDIS_URL });
});
afterAll(async () => {
  await flushKeyActivity();
  await restoreConfig();
  await proxy?.close();
  await handle?.close();
});

const NO_STORE = { RATE_LIMIT_STORE: undefined, REDIS_URL: undefined, KV_REST_API_URL: undefined, KV_REST_API_TOKEN: undefined };

describe(`per-key usage on Upstash (${describeDriver()})`, () => {
  it.skipIf(!reachable)('counts 60 concurrent requests exactly by outcome in Upstash, and reads them back', async () => {
    await applyConfig({
      ...PROXY_CLIENT_ADDRESS,
      ...NO_STORE,
      UPSTASH_REDIS_REST_URL: proxy!.url,
      UPSTASH_REDIS_REST_TOKEN: proxy!.token,
      RATE_LIMIT_GENERAL_PER_WINDOW: '1000',
      RATE_LIMIT_TIMEOUT_MS: '30000',
      KEY_ACTIVITY: 'on',
    });
    expect(processRateLimitStore().kind).toBe('upstash');
    const { key, id } = await newApiKey(handle.db, DEMO_USERS.alice.id, { name: `upstash usage ${Date.now()}` });
    const answers = await Promise.all(
      Array.from({ length: 60 }, (_, i) => served(apiRequest('GET', i % 3 === 0 ? '/contracts/00000000-0000-4000-8000-000000000000' : '/contracts?limit=1', { key }))),
    );
    const statuses = answers.map((a) => a.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(40);
    expect(statuses.filter((s) => s === 404)).toHaveLength(20);
    const sentBefore = Object.values(proxy!.requests).reduce((a, b) => a + b, 0);

    const usage = await createCaller(createInnerContext({ db: handle.db, sessionUser: { ...DEMO_USERS.alice, name: null } })).keyActivity.usage({ keyId: id });
    expect(usage.store).toBe('redis');
    expect(usage.totals.read).toEqual({ '2xx': 40, '304': 0, '4xx': 20, '429': 0, '5xx': 0 });
    expect((usage.hours.at(-1) as { read: Record<string, number> }).read['4xx']).toBe(20);
    // The counts were written and read over Upstash's HTTP protocol (a script each way).
    expect(Object.values(proxy!.requests).reduce((a, b) => a + b, 0)).toBeGreaterThan(sentBefore);
  });
});
