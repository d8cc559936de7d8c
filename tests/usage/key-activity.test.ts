import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '@/db/client';
import { DEMO_USERS, seedDemo } from '@/db/seed/demo';
import { clearVerifiedTokenCache } from '@/server/access/tokens';
import { setProcessDatabase } from '@/server/database';
import { toAppError } from '@/server/errors';
import { processMetrics } from '@/server/observability/metrics';
import { apiRouteHandler } from '@/server/rest/route-handler';
import { createCallerFactory, createInnerContext } from '@/server/trpc/init';
import { internalRouter } from '@/server/trpc/root';
import { flushKeyActivity, loggedPath, MAX_PENDING_ROWS, pendingKeyActivity, recordKeyRequest } from '@/server/usage/recorder';
import { apiRequest, PROXY_CLIENT_ADDRESS, type ErrorJson } from '../helpers/api';
import { configureForFile } from '../helpers/config';
import { createTestDatabase, describeDriver } from '../helpers/db';
import { newApiKey } from '../helpers/tokens';

/**
 * Per-key usage and the request log, end to end: requests through the API's router as the
 * App Router serves it (observed, so that the answer's record reaches the recorder), the
 * counts in Redis (REDIS_URL) or the database (none), read back through the settings
 * page's tRPC procedures as the signed-in owner, and as someone else.
 */

configureForFile({ ...PROXY_CLIENT_ADDRESS, RATE_LIMIT_GENERAL_PER_WINDOW: '60', METRICS_TOKEN: 'm'.repeat(32), OBSERVABILITY: 'on', KEY_ACTIVITY: 'on' });

// The route handler the app serves /api/v1 with: observed, and feeding the key's usage.
const served = apiRouteHandler;
const call = async (req: Request) => {
  const res = await served(req);
  const text = await res.text();
  return { status: res.status, headers: res.headers, json: text && res.headers.get('content-type')?.includes('json') ? JSON.parse(text) : undefined };
};

let handle: DatabaseHandle;
const createCaller = createCallerFactory(internalRouter);
const as = (user: { id: string; email: string }) => createCaller(createInnerContext({ db: handle.db, sessionUser: { ...user, name: null } }));

beforeAll(async () => {
  handle = await createTestDatabase();
  await seedDemo(handle.db);
  setProcessDatabase(handle);
  clearVerifiedTokenCache();
});
afterAll(async () => {
  await flushKeyActivity();
  await handle?.close();
});

/** The HTTP status the app's endpoint would answer with what a procedure threw. */
const statusOf = (promise: Promise<unknown>) =>
  promise.then(
    () => 200,
    (error: unknown) => toAppError(error, 'test', false).status,
  );

const lastHour = <T extends { hours: unknown[] }>(usage: T) => usage.hours.at(-1) as { read: Record<string, number>; export: Record<string, number> };

describe(`per-key usage (${describeDriver()}, ${process.env.REDIS_URL ? 'redis' : 'memory'})`, () => {
  it('counts 100 concurrent requests exactly, by outcome, including those refused for the quota', async () => {
    const { key, id } = await newApiKey(handle.db, DEMO_USERS.alice.id, { name: 'etl' });
    const answers = await Promise.all(Array.from({ length: 100 }, () => call(apiRequest('GET', '/contracts?limit=1', { key }))));
    const statuses = answers.map((a) => a.status);
    // 60 and 40 when the limiter's store answers in time (it fails open when it does not,
    // on a loaded machine): the counts must match what the clients saw either way.
    const ok = statuses.filter((s) => s === 200).length;
    const limited = statuses.filter((s) => s === 429).length;
    expect(ok + limited).toBe(100);
    expect(limited).toBeGreaterThan(0);
    expect((await call(apiRequest('POST', '/contracts/export', { key }))).status).toBe(200);

    const usage = await as(DEMO_USERS.alice).keyActivity.usage({ keyId: id });
    expect(usage.store).toBe(process.env.REDIS_URL ? 'redis' : 'database');
    expect(lastHour(usage).read).toEqual({ '2xx': ok, '304': 0, '4xx': 0, '429': limited, '5xx': 0 });
    expect(lastHour(usage).export).toEqual({ '2xx': 1, '304': 0, '4xx': 0, '429': 0, '5xx': 0 });
    expect(usage.days.at(-1)!.read['2xx']).toBe(ok);
    expect(usage.totals.read['429']).toBe(limited);
    expect(usage.hours).toHaveLength(48);
    expect(usage.days).toHaveLength(90);
    expect(usage.lastUsed?.clientAddress).toMatch(/^2001:db8:/);
  });

  it('tells 304, other 4xx and 2xx apart', async () => {
    const { key, id } = await newApiKey(handle.db, DEMO_USERS.alice.id, { name: 'conditional' });
    const first = await call(apiRequest('GET', '/contracts?limit=2', { key, headers: { 'User-Agent': 'etl-job/1.0' } }));
    expect(first.status).toBe(200);
    const etag = first.headers.get('etag')!;
    expect((await call(apiRequest('GET', '/contracts?limit=2', { key, headers: { 'If-None-Match': etag } }))).status).toBe(304);
    expect((await call(apiRequest('GET', '/contracts/00000000-0000-4000-8000-000000000000', { key }))).status).toBe(404);
    expect((await call(apiRequest('GET', '/contracts?limit=abc', { key }))).status).toBe(400);
    const usage = await as(DEMO_USERS.alice).keyActivity.usage({ keyId: id });
    expect(lastHour(usage).read).toEqual({ '2xx': 1, '304': 1, '4xx': 2, '429': 0, '5xx': 0 });
  });

  it('keeps counting and logging the other keys when a key with activity waiting is deleted', async () => {
    const gone = await newApiKey(handle.db, DEMO_USERS.alice.id, { name: 'deleted soon' });
    const kept = await newApiKey(handle.db, DEMO_USERS.alice.id, { name: 'kept' });
    expect((await call(apiRequest('GET', '/contracts?limit=1', { key: gone.key }))).status).toBe(200);
    const answer = await call(apiRequest('GET', '/contracts?limit=1', { key: kept.key }));
    expect(answer.status).toBe(200);
    // Deleted (as with its account) before the recorder's second is up.
    await handle.query('DELETE FROM access_tokens WHERE id = $1', [gone.id]);
    await flushKeyActivity();
    expect(pendingKeyActivity()).toEqual({ rows: 0, counts: 0 });
    expect(lastHour(await as(DEMO_USERS.alice).keyActivity.usage({ keyId: kept.id })).read['2xx']).toBe(1);
    expect(await as(DEMO_USERS.alice).keyActivity.findRequest({ requestId: answer.headers.get('x-request-id')! })).toMatchObject({ status: 200, keyName: 'kept' });
  });

  it('shows a key to its owner only; a bad id is a 400', async () => {
    const { id } = await newApiKey(handle.db, DEMO_USERS.alice.id, { name: 'private' });
    await expect(as(DEMO_USERS.bob).keyActivity.usage({ keyId: id })).rejects.toMatchObject({ message: 'No such API key.' });
    await expect(as(DEMO_USERS.bob).keyActivity.usage({ keyId: '00000000-0000-4000-8000-000000000000' })).rejects.toMatchObject({ message: 'No such API key.' });
    expect(await statusOf(as(DEMO_USERS.alice).keyActivity.usage({ keyId: 'nope' }))).toBe(400);
  });
});

describe('request log', () => {
  it('finds the request of an error body by its id within two seconds, for the key’s owner only', async () => {
    const { key } = await newApiKey(handle.db, DEMO_USERS.alice.id, { name: 'lookup' });
    const answer = await call(apiRequest('GET', '/contracts/00000000-0000-4000-8000-000000000000', { key, headers: { 'User-Agent': 'curl/8' } }));
    const requestId = (answer.json as ErrorJson).request_id;
    expect(answer.headers.get('x-request-id')).toBe(requestId);
    const started = Date.now();
    const found = await as(DEMO_USERS.alice).keyActivity.findRequest({ requestId });
    expect(Date.now() - started).toBeLessThan(2000);
    expect(found).toMatchObject({ requestId, status: 404, errorCode: 'not_found', method: 'GET', userAgent: 'curl/8', keyName: 'lookup' });
    expect(found.path).toBe('/api/v1/contracts/00000000-0000-4000-8000-000000000000');
    expect(found.bytes).toBeGreaterThan(0);

    // Someone else's id and an unknown one: the same answer.
    const foreign = await as(DEMO_USERS.bob).keyActivity.findRequest({ requestId }).catch((e: { message: string; data: unknown }) => e);
    const unknownId = `req_${'0'.repeat(32)}`;
    const unknown = await as(DEMO_USERS.bob).keyActivity.findRequest({ requestId: unknownId }).catch((e: { message: string; data: unknown }) => e);
    expect(toAppError(foreign, 'test', false).status).toBe(404);
    expect((foreign as { message: string }).message.replace(requestId, 'ID')).toBe((unknown as { message: string }).message.replace(unknownId, 'ID'));
    expect(await statusOf(as(DEMO_USERS.alice).keyActivity.findRequest({ requestId: 'req_123' }))).toBe(400);
  });

  it('lists a key’s requests newest first, by status class, paged by cursor', async () => {
    const { key, id } = await newApiKey(handle.db, DEMO_USERS.alice.id, { name: 'paged' });
    for (let i = 0; i < 55; i++) await call(apiRequest('GET', `/contracts?limit=1&offset=${i}`, { key }));
    await call(apiRequest('GET', '/contracts?limit=0', { key }));
    const alice = as(DEMO_USERS.alice);
    const first = await alice.keyActivity.requests({ keyId: id });
    expect(first.requests).toHaveLength(50);
    expect(first.requests[0]!.status).toBe(400);
    expect(first.requests[1]!.path).toBe('/api/v1/contracts?limit=1&offset=54');
    const second = await alice.keyActivity.requests({ keyId: id, cursor: first.nextCursor! });
    expect(second.requests).toHaveLength(6);
    expect(second.requests.at(-1)!.path).toBe('/api/v1/contracts?limit=1&offset=0');
    expect(second.nextCursor).toBeNull();
    const errors = await alice.keyActivity.requests({ keyId: id, statusClass: '4xx' });
    expect(errors.requests.map((r) => r.status)).toEqual([400]);
    expect(await statusOf(alice.keyActivity.requests({ keyId: id, statusClass: '6xx' as '5xx' }))).toBe(400);
    expect(await statusOf(alice.keyActivity.requests({ keyId: id, cursor: 'garbage' }))).toBe(400);
    expect(await statusOf(as(DEMO_USERS.bob).keyActivity.requests({ keyId: id }))).toBe(404);
  });

  it('masks a calendar feed’s token in a logged path', () => {
    expect(loggedPath('http://h/api/v1/calendar/cdcal_secretsecret.ics?a=1')).toBe('/api/v1/calendar/****.ics?a=1');
    expect(loggedPath('http://h/api/v1/contracts?limit=1')).toBe('/api/v1/contracts?limit=1');
  });

  it('stays bounded when the database is down: rows are dropped and counted, nothing throws', async () => {
    const down = await createTestDatabase();
    const { id } = await newApiKey(down.db, DEMO_USERS.alice.id).catch(async () => {
      await seedDemo(down.db);
      return newApiKey(down.db, DEMO_USERS.alice.id);
    });
    await flushKeyActivity();
    setProcessDatabase(down);
    await down.close();
    const dropped = async () => (await processMetrics().requestLogDropped.get()).values[0]?.value ?? 0;
    const before = await dropped();
    const record = { requestId: `req_${'a'.repeat(32)}`, traceId: undefined, method: 'GET', route: '/api/v1/contracts', status: 200, errorCode: undefined, durationMs: 1, bytes: 10, keyId: id, keyKind: 'api_key' as const, aborted: false, startedAt: 0, finished: true };
    for (let i = 0; i < MAX_PENDING_ROWS + 5; i++) recordKeyRequest(record, 'http://h/api/v1/contracts', null, null);
    expect(pendingKeyActivity().rows).toBe(MAX_PENDING_ROWS);
    expect((await dropped()) - before).toBe(5);
    await flushKeyActivity();
    expect(pendingKeyActivity().rows).toBe(0);
    expect((await dropped()) - before).toBe(MAX_PENDING_ROWS + 5);
    setProcessDatabase(handle);
  });
});
