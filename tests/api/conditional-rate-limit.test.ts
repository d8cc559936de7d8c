import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '@/db/client';
import { DEMO_USERS, demoContractId, seedDemo } from '@/db/seed/demo';
import { setProcessDatabase } from '@/server/database';
import { processRateLimitStore } from '@/server/rate-limit';
import { apiRequest, PROXY_CLIENT_ADDRESS, send } from '../helpers/api';
import { applyConfig, restoreConfig } from '../helpers/config';
import { createTestDatabase } from '../helpers/db';
import { newApiKey } from '../helpers/tokens';
import { startUpstashProxy, type UpstashProxy } from '../helpers/upstash-proxy';
import { redisReachable, TEST_REDIS_URL } from '../rate-limit/support';

/**
 * A 304 does not count against the key's limit, and the limit stays exact under
 * concurrency (issue 16): a burst of conditional and unconditional requests with one key,
 * at the spec's default of 60 a minute, on each of the three stores: this process's
 * memory, a plain Redis and Upstash's REST protocol (the test proxy over that Redis).
 */

const reachable = await redisReachable();
if (!reachable) console.warn(`SKIPPED: Redis is not reachable at ${TEST_REDIS_URL}; the Redis and Upstash cases did not run.`);

let handle: DatabaseHandle;
let proxy: UpstashProxy | undefined;
beforeAll(async () => {
  handle = await createTestDatabase();
  setProcessDatabase(handle);
  await seedDemo(handle.db);
  if (reachable) proxy = await startUpstashProxy({ redisUrl: TEST_REDIS_URL });
});
afterAll(async () => {
  await restoreConfig();
  await proxy?.close();
  await handle?.close();
});

/**
 * The limit's window is an hour here (60 requests, as the spec's minute): a burst that a
 * busy machine stretches over a window boundary is legitimately counted by two windows,
 * which would make the exact count meaningless. This waits while the hour is about to end.
 */
const WINDOW_SECONDS = 3600;
const EDGE_MARGIN_MS = 90_000;
async function awayFromWindowEdge(marginMs = EDGE_MARGIN_MS) {
  const left = WINDOW_SECONDS * 1000 - (Date.now() % (WINDOW_SECONDS * 1000));
  if (left < marginMs) await new Promise((r) => setTimeout(r, left + 50));
}

const NO_STORE = { RATE_LIMIT_STORE: undefined, REDIS_URL: undefined, UPSTASH_REDIS_REST_URL: undefined, UPSTASH_REDIS_REST_TOKEN: undefined, KV_REST_API_URL: undefined, KV_REST_API_TOKEN: undefined };
const STORES: [string, boolean, () => Record<string, string | undefined>][] = [
  ['memory', true, () => ({ ...NO_STORE, RATE_LIMIT_STORE: 'memory' })],
  ['redis', reachable, () => ({ ...NO_STORE, REDIS_URL: TEST_REDIS_URL })],
  ['upstash', reachable, () => ({ ...NO_STORE, UPSTASH_REDIS_REST_URL: proxy!.url, UPSTASH_REDIS_REST_TOKEN: proxy!.token })],
];

describe.each(STORES)('conditional requests and the exact limit (60 per window), %s store', (kind, available, env) => {
  it.skipIf(!available)('30 revalidations, 100 stale conditional and 20 plain requests at once: 30 × 304, and exactly the 59 requests left as 200', async () => {
    // A generous store timeout and deadline: a degraded (fail-open) answer, or a 503 from a
    // busy machine's queue of 150 queries, would be a wrong count here.
    await applyConfig({
      ...PROXY_CLIENT_ADDRESS,
      ...env(),
      RATE_LIMIT_GENERAL_PER_WINDOW: '60',
      RATE_LIMIT_GENERAL_WINDOW_SECONDS: String(WINDOW_SECONDS),
      RATE_LIMIT_CONDITIONAL_PER_WINDOW: undefined,
      RATE_LIMIT_TIMEOUT_MS: '30000',
      REQUEST_DEADLINE_MS: '60000',
    });
    expect(processRateLimitStore().kind).toBe(kind);
    const key = (await newApiKey(handle.db, DEMO_USERS.alice.id, { name: `burst ${kind}` })).key;
    const path = `/contracts/${demoContractId('alice-1')}`;
    await awayFromWindowEdge();
    const first = await send(apiRequest('GET', path, { key }));
    expect(first.headers.get('x-ratelimit-remaining')).toBe('59');
    const etag = first.headers.get('etag')!;

    const requests = [
      ...Array.from({ length: 30 }, () => ({ kind: 'revalidation', headers: { 'If-None-Match': etag } })),
      ...Array.from({ length: 100 }, () => ({ kind: 'stale', headers: { 'If-None-Match': '"stale"' } })),
      ...Array.from({ length: 20 }, () => ({ kind: 'plain', headers: {} as Record<string, string> })),
    ].sort(() => Math.random() - 0.5);
    const answers = await Promise.all(requests.map(async (r) => ({ kind: r.kind, answer: await send(apiRequest('GET', path, { key, headers: r.headers })) })));

    const statuses = (which: string) => answers.filter((a) => a.kind === which).map((a) => a.answer.status);
    expect(statuses('revalidation')).toEqual(Array<number>(30).fill(304));
    const counted = answers.filter((a) => a.kind !== 'revalidation');
    // Every answer was counted by the store (a fail-open one carries no rate-limit headers).
    expect(answers.filter((a) => a.answer.headers.get('x-ratelimit-limit') === null).map((a) => a.answer.status)).toEqual([]);
    expect(counted.filter((a) => a.answer.status === 200)).toHaveLength(59);
    expect(counted.filter((a) => a.answer.status === 429)).toHaveLength(61);
    // Each 200 saw a count of its own: 58 down to 0, once each.
    const remaining = counted.filter((a) => a.answer.status === 200).map((a) => Number(a.answer.headers.get('x-ratelimit-remaining')));
    expect(remaining.sort((a, b) => a - b)).toEqual(Array.from({ length: 59 }, (_, i) => i));
    for (const { answer } of answers.filter((a) => a.kind === 'revalidation')) {
      expect(answer.text).toBe('');
      expect(answer.headers.get('etag')).toBe(etag);
    }
    // Once the key is used up, a revalidation is still answered; anything else is not.
    expect((await send(apiRequest('GET', path, { key, headers: { 'If-None-Match': etag } }))).status).toBe(304);
    expect((await send(apiRequest('GET', path, { key }))).status).toBe(429);
    // The wait for the window's edge happens inside the test: its time limit must cover it
    // (CI started this at 04:58 and timed out waiting for 05:00).
  }, EDGE_MARGIN_MS + 120_000);
});
