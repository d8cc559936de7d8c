import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '@/db/client';
import { DEMO_USERS, seedDemo } from '@/db/seed/demo';
import { ConfigError, parseConfig } from '@/server/config';
import { setProcessDatabase } from '@/server/database';
import { handleCronRequest } from '@/server/webhooks/cron';
import { applyConfig, configureForFile } from '../helpers/config';
import { CLIENT_ADDRESS, PROXY_CLIENT_ADDRESS } from '../helpers/api';
import { createTestDatabase } from '../helpers/db';
import { receiverEndpoint, startReceiver, verify, WEBHOOK_TEST_ENV } from './support';

/** The WEBHOOK_* settings and the cron route that drains the queue on Vercel. */

const CRON_SECRET = 'a-cron-secret-for-the-tests-0123456789';
configureForFile({ ...PROXY_CLIENT_ADDRESS, ...WEBHOOK_TEST_ENV, WEBHOOK_ALLOW_PRIVATE_URLS: 'true', CRON_SECRET, RATE_LIMIT_AUTH_FAILURES_PER_MINUTE: '3' });

function problems(env: Record<string, string>): string[] {
  try {
    parseConfig(env);
    return [];
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
}

describe('configuration', () => {
  it('names the variable and says what is wrong', () => {
    expect(problems({ WEBHOOK_WORKER: 'maybe' })).toEqual(['WEBHOOK_WORKER must be on or off']);
    expect(problems({ WEBHOOK_ALLOW_PRIVATE_URLS: 'yes' })).toEqual(['WEBHOOK_ALLOW_PRIVATE_URLS must be true or false']);
    expect(problems({ WEBHOOK_ENCRYPTION_KEY: 'short' })[0]).toMatch(/^WEBHOOK_ENCRYPTION_KEY must be at least 32 characters/);
    expect(problems({ CRON_SECRET: 'short' })[0]).toMatch(/^CRON_SECRET must be at least 16 characters/);
  });

  it('the in-process worker runs by default, not on Vercel; https only in production unless private URLs are allowed', () => {
    expect(parseConfig({}).webhooks).toMatchObject({ inProcessWorker: true, allowPrivateUrls: false, allowHttp: true });
    expect(parseConfig({ WEBHOOK_WORKER: 'off' }).webhooks.inProcessWorker).toBe(false);
    const vercel = { VERCEL: '1', DATABASE_URL: 'postgres://x/y', REDIS_URL: 'redis://x' };
    expect(parseConfig(vercel).webhooks.inProcessWorker).toBe(false);
    expect(parseConfig({ ...vercel, WEBHOOK_WORKER: 'on' }).webhooks.inProcessWorker).toBe(true);
    const production = { NODE_ENV: 'production', AUTH_SECRET: 'x'.repeat(32) };
    expect(parseConfig(production).webhooks).toMatchObject({ allowHttp: false, allowPrivateUrls: false });
    expect(parseConfig({ ...production, WEBHOOK_ALLOW_PRIVATE_URLS: 'true' }).webhooks).toMatchObject({ allowHttp: true, allowPrivateUrls: true });
  });
});

describe('GET /api/cron/webhooks', () => {
  let handle: DatabaseHandle;
  beforeAll(async () => {
    handle = await createTestDatabase();
    setProcessDatabase(handle);
    await seedDemo(handle.db);
  });
  afterAll(() => handle?.close());

  const cron = (authorization?: string) =>
    handleCronRequest(new Request('http://localhost/api/cron/webhooks', { headers: { 'x-real-ip': CLIENT_ADDRESS, ...(authorization ? { authorization } : {}) } }));

  it('drains the queue with the bearer secret; refuses anything else, then limits the address', async () => {
    const receiver = await startReceiver();
    try {
      const { secret } = await receiverEndpoint(handle.db, DEMO_USERS.carol.id, receiver);
      await handle.query(`UPDATE contracts SET title = 'via cron' WHERE owner_id = $1`, [DEMO_USERS.carol.id]);
      for (const wrong of [undefined, `Bearer ${CRON_SECRET}x`, CRON_SECRET]) {
        const refused = await cron(wrong);
        expect(refused.status).toBe(401);
        expect(await refused.text()).not.toContain(CRON_SECRET);
      }
      // Out of failed attempts: guesses get 429.
      expect((await cron(`Basic ${CRON_SECRET}`)).status).toBe(429);
      expect(receiver.received).toHaveLength(0);
      const drained = await cron(`Bearer ${CRON_SECRET}`);
      expect(drained.status).toBe(200);
      const body = (await drained.json()) as { success: boolean; data: { attempted: number; succeeded: number } };
      expect(body.success).toBe(true);
      expect(body.data.succeeded).toBeGreaterThan(0);
      expect(receiver.received).toHaveLength(body.data.succeeded);
      expect(verify(secret, receiver.received[0]!).type).toBe('contract.updated');
    } finally {
      await receiver.close();
    }
  });

  it('does not exist without CRON_SECRET', async () => {
    await applyConfig({ CRON_SECRET: undefined });
    expect((await cron(`Bearer ${CRON_SECRET}`)).status).toBe(404);
  });
});
