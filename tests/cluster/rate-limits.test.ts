import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_USERS } from '@/db/seed/demo';
import {
  awayFromWindowEdge,
  byInstance,
  cluster,
  freshLoopbackAddress,
  instanceNames,
  limitOf,
  mintKey,
  request,
  revokeKey,
  type Answer,
  type Cluster,
} from './support';

/**
 * Rate limits on the cluster: three `next start` instances behind HAProxy (round robin),
 * counting in one Redis. Every request goes over real HTTP through the balancer; the
 * balancer's X-Served-By header says which instance answered. A limit counted per
 * instance would let up to three times the limit through.
 */

let c: Cluster;
let keys: Record<'list' | 'export' | 'address', string>;
const minted: string[] = [];
beforeAll(async () => {
  c = cluster();
  // `npm run apikey` on the primary, one per test (each has its own buckets), minted at once.
  const names = ['list', 'export', 'address'] as const;
  const created = await Promise.all(names.map((name) => mintKey(c, DEMO_USERS.alice.email, `cluster ${name} limit`)));
  minted.push(...created.map((k) => k.id));
  keys = Object.fromEntries(names.map((name, i) => [name, created[i]!.key])) as typeof keys;
});
afterAll(async () => {
  // At most 25 active keys per user: the keys of this run go.
  await Promise.all(minted.map((id) => revokeKey(c, id).catch(() => {})));
});

/** `extra` more concurrent requests than the limit; the limit must be small enough for that to mean something. */
function burstSize(limit: number, extra: number): number {
  if (limit > 500) throw new Error(`the cluster runs with a limit of ${limit}: restart it with the default limits (npm run cluster -- down, then up without RATE_LIMIT_*)`);
  return limit + extra;
}

/** Answers that are neither 200 nor 429, with what they said (a 503 names its cause). */
const others = (answers: Answer[]) =>
  answers.filter((a) => a.status !== 200 && a.status !== 429).map((a) => `${a.status} from ${a.servedBy}: ${a.body.slice(0, 200)}`);

function expectRateLimited(denied: Answer, windowSeconds: number) {
  const retryAfter = Number(denied.headers['retry-after']);
  expect(Number.isInteger(retryAfter)).toBe(true);
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(retryAfter).toBeLessThanOrEqual(windowSeconds);
  // Retry-After and X-RateLimit-Reset name the same instant.
  expect(Math.abs(denied.receivedAt + retryAfter - Number(denied.headers['x-ratelimit-reset']))).toBeLessThanOrEqual(2);
  expect(denied.headers['x-ratelimit-remaining']).toBe('0');
  expect(JSON.parse(denied.body)).toMatchObject({ success: false, error: { code: 'rate_limited' } });
}

describe('rate limits across instances', () => {
  it('lets exactly the limit of 100 concurrent list requests with one key through, whichever instance serves them', async () => {
    const limit = limitOf(c, 'RATE_LIMIT_GENERAL_PER_WINDOW', 60);
    const window = limitOf(c, 'RATE_LIMIT_GENERAL_WINDOW_SECONDS', 60);
    const total = burstSize(limit, 40);
    const key = keys.list;
    await awayFromWindowEdge(window);

    const answers = await Promise.all(Array.from({ length: total }, () => request(c, '/api/v1/contracts?limit=1', { headers: { 'x-api-key': key } })));

    const ok = answers.filter((a) => a.status === 200);
    const limited = answers.filter((a) => a.status === 429);
    expect({ ok: ok.length, limited: limited.length, other: others(answers) }).toEqual({ ok: limit, limited: total - limit, other: [] });

    // Round robin: every instance took its third of the burst, and served some of the 200s.
    const spread = byInstance(answers);
    for (const name of instanceNames(c)) expect(spread[name], JSON.stringify(spread)).toBeGreaterThanOrEqual(Math.floor(total / 3) - 2);
    expect(Object.keys(byInstance(ok)).sort()).toEqual(instanceNames(c).sort());

    // One counter for all instances: each remaining count from limit-1 down to 0 was given once.
    const remaining = ok.map((a) => Number(a.headers['x-ratelimit-remaining'])).sort((a, b) => a - b);
    expect(remaining).toEqual(Array.from({ length: limit }, (_, i) => i));
    for (const denied of limited) expectRateLimited(denied, window);
  });

  it('lets exactly the export limit of 100 concurrent exports with one key through', async () => {
    const limit = limitOf(c, 'RATE_LIMIT_EXPORT_PER_WINDOW', 10);
    const window = limitOf(c, 'RATE_LIMIT_EXPORT_WINDOW_SECONDS', 3600);
    const total = burstSize(limit, 90);
    const key = keys.export;
    await awayFromWindowEdge(window);

    const answers = await Promise.all(
      Array.from({ length: total }, () => request(c, '/api/v1/contracts/export', { method: 'POST', headers: { 'x-api-key': key }, body: '{"status":"completed"}' })),
    );

    const ok = answers.filter((a) => a.status === 200);
    const limited = answers.filter((a) => a.status === 429);
    expect({ ok: ok.length, limited: limited.length, other: others(answers) }).toEqual({ ok: limit, limited: total - limit, other: [] });
    const spread = byInstance(answers);
    for (const name of instanceNames(c)) expect(spread[name], JSON.stringify(spread)).toBeGreaterThanOrEqual(Math.floor(total / 3) - 2);
    for (const csv of ok) {
      expect(csv.headers['content-type']).toMatch(/^text\/csv/);
      expect(csv.body.split('\r\n')[0]).toMatch(/^id,/);
    }
    for (const denied of limited) expectRateLimited(denied, window);

    // The general limit is a separate bucket: the key still lists.
    expect((await request(c, '/api/v1/contracts?limit=1', { headers: { 'x-api-key': key } })).status).toBe(200);
  });
});

describe('failed keys, counted per client address across instances', () => {
  it('counts the address the balancer saw, whatever X-Forwarded-For the client sends', async () => {
    const limit = limitOf(c, 'RATE_LIMIT_AUTH_FAILURES_PER_MINUTE', 30);
    const total = burstSize(limit, 10);
    const guesser = freshLoopbackAddress();
    const key = keys.address;
    await awayFromWindowEdge(60);

    // Each request claims another origin; the instances trust only the entry HAProxy appends.
    const answers = await Promise.all(
      Array.from({ length: total }, (_, i) =>
        request(c, '/api/v1/contracts', { from: guesser, headers: { 'x-api-key': `cdapi_wrong${i}`, 'x-forwarded-for': `198.51.100.${i}`, 'x-real-ip': `198.51.100.${i}` } }),
      ),
    );
    const statuses = answers.map((a) => a.status);
    expect({ unauthorized: statuses.filter((s) => s === 401).length, limited: statuses.filter((s) => s === 429).length }).toEqual({ unauthorized: limit, limited: total - limit });
    expect(Object.keys(byInstance(answers)).sort()).toEqual(instanceNames(c).sort());

    // Out of failed attempts, the address is refused even with a valid key, on every instance…
    const fromGuesser = await Promise.all(instanceNames(c).map(() => request(c, '/api/v1/contracts?limit=1', { from: guesser, headers: { 'x-api-key': key } })));
    expect(fromGuesser.map((a) => a.status)).toEqual(instanceNames(c).map(() => 429));
    expect(Object.keys(byInstance(fromGuesser)).sort()).toEqual(instanceNames(c).sort());
    // …while another address is not.
    const other = freshLoopbackAddress();
    expect((await request(c, '/api/v1/contracts?limit=1', { from: other, headers: { 'x-api-key': key } })).status).toBe(200);
    expect((await request(c, '/api/v1/contracts', { from: other, headers: { 'x-api-key': 'cdapi_wrong' } })).status).toBe(401);
  });
});
