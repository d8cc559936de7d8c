import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '@/db/client';
import { setProcessDatabase } from '@/server/database';
import { DEMO_USERS, seedDemo } from '@/db/seed/demo';
import { handleApiRequest } from '@/server/rest/router';
import { PROXY_CLIENT_ADDRESS } from '../helpers/api';
import { configureForFile } from '../helpers/config';
import { createTestDatabase } from '../helpers/db';
import { newApiKey } from '../helpers/tokens';

// The spec's limits (the defaults), on whichever store the environment selects: Redis in
// CI's first run (REDIS_URL), this process's memory otherwise.

// Requests come as through a proxy that sets X-Real-IP. Without a trusted source every
// client shares one failure bucket, which other test files would fill when they count in
// the same Redis.
configureForFile(PROXY_CLIENT_ADDRESS);
/** A client address of its own (IPv6 counts per /64; 2001:db8::/32 is for documentation). */
const freshAddress = () => `2001:db8:${randomBytes(2).toString('hex')}:${randomBytes(2).toString('hex')}::1`;
const ADDRESS = freshAddress();

let handle: DatabaseHandle;
beforeAll(async () => {
  handle = await createTestDatabase();
  setProcessDatabase(handle);
  await seedDemo(handle.db);
});
afterAll(async () => {
  await handle?.close();
});

/**
 * Waits while the current fixed window of `seconds` is about to end: the sliding window
 * weighs the previous window's count, so a burst that straddles a boundary is counted
 * differently (by design) and would make exact assertions meaningless.
 */
async function awayFromWindowEdge(seconds: number, marginMs = 5000) {
  const left = seconds * 1000 - (Date.now() % (seconds * 1000));
  if (left < marginMs) await new Promise((r) => setTimeout(r, left + 50));
}

const freshKey = async () => (await newApiKey(handle.db, DEMO_USERS.alice.id, { name: 'rl' })).key;
const list = (key: string, ip = ADDRESS) =>
  handleApiRequest(new Request('http://localhost/api/v1/contracts?limit=1', { headers: { 'X-API-Key': key, 'X-Real-IP': ip } }));
const exportCsv = (key: string) =>
  handleApiRequest(new Request('http://localhost/api/v1/contracts/export', { method: 'POST', headers: { 'X-API-Key': key, 'X-Real-IP': ADDRESS } }));

describe('rate limits through the API', () => {
  it('lets exactly 60 of 100 concurrent requests with one key through; the rest get 429', async () => {
    const key = await freshKey();
    await awayFromWindowEdge(60);
    const responses = await Promise.all(
      Array.from({ length: 100 }, async () => {
        const res = await list(key);
        return Object.assign(res, { receivedAt: Date.now() / 1000 });
      }),
    );
    const statuses = responses.map((r) => r.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(60);
    expect(statuses.filter((s) => s === 429)).toHaveLength(40);

    const remaining = responses.filter((r) => r.status === 200).map((r) => Number(r.headers.get('x-ratelimit-remaining')));
    expect(remaining.sort((a, b) => a - b)).toEqual(Array.from({ length: 60 }, (_, i) => i));

    const denied = responses.find((r) => r.status === 429)!;
    const body = await denied.json();
    expect(body).toMatchObject({ success: false, error: { code: 'rate_limited' } });
    expect(body.request_id).toBe(denied.headers.get('x-request-id'));
    const retryAfter = Number(denied.headers.get('retry-after'));
    const reset = Number(denied.headers.get('x-ratelimit-reset'));
    const now = denied.receivedAt;
    expect(Number.isInteger(retryAfter)).toBe(true);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    // Retry-After and X-RateLimit-Reset describe the same instant (seconds, not milliseconds).
    expect(Math.abs(now + retryAfter - reset)).toBeLessThanOrEqual(2);
    expect(denied.headers.get('x-ratelimit-limit')).toBe('60');
    expect(denied.headers.get('x-ratelimit-remaining')).toBe('0');
    expect(denied.headers.get('ratelimit-policy')).toBe('"general";q=60;w=60');
    expect(denied.headers.get('ratelimit')).toMatch(/^"general";r=0;t=\d+$/);
  });

  it('counts exports in their own bucket: the 11th export is a 429 and a list still succeeds', async () => {
    const key = await freshKey();
    await awayFromWindowEdge(3600);
    const statuses = [];
    for (let i = 0; i < 11; i++) {
      const res = await exportCsv(key);
      await res.text();
      statuses.push(res.status);
    }
    expect(statuses).toEqual([...Array(10).fill(200), 429]);
    const listed = await list(key);
    expect(listed.status).toBe(200);
    // The denied export used nothing of the general bucket, and the exports none either.
    expect(listed.headers.get('x-ratelimit-remaining')).toBe('59');
    const again = await exportCsv(key);
    expect(again.status).toBe(429);
    const retryAfter = Number(again.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(3600);
    expect(Math.abs(Date.now() / 1000 + retryAfter - Number(again.headers.get('x-ratelimit-reset')))).toBeLessThanOrEqual(2);
    expect(again.headers.get('ratelimit-policy')).toBe('"export";q=10;w=3600');
  });

  it('limits failed authentication per client address: 401 until the limit, then 429', async () => {
    // Unique addresses per run: Redis keeps counts across runs within the window.
    const ip = freshAddress();
    const other = freshAddress();
    const statuses = [];
    for (let i = 0; i < 31; i++) statuses.push((await list(`cdapi_wrong${i}`, ip)).status);
    expect(statuses.slice(0, 30).every((s) => s === 401)).toBe(true);
    expect(statuses[30]).toBe(429);
    // Once blocked, a correct key from that address is refused too: a lucky guess would
    // otherwise still be recognisable. Other addresses are not affected.
    const valid = await freshKey();
    expect((await list(valid, ip)).status).toBe(429);
    expect((await list('cdapi_wrong', other)).status).toBe(401);
    expect((await list(valid, other)).status).toBe(200);
  });
});
