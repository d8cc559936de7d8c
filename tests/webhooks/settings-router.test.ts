import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { DatabaseHandle } from '@/db/client';
import { users } from '@/db/schema';
import { DEMO_USERS, seedDemo } from '@/db/seed/demo';
import { createCallerFactory, createInnerContext } from '@/server/trpc/init';
import { internalRouter } from '@/server/trpc/root';
import { configureForFile } from '../helpers/config';
import { captureLogs, type CapturedLogs } from '../helpers/logs';
import { createTestDatabase } from '../helpers/db';
import { startReceiver, verify, WEBHOOK_TEST_ENV, type Receiver } from './support';

/**
 * Settings → Webhooks through the app's own tRPC router, as the page calls it: only the
 * signed-in owner's endpoints, the secret in no answer but create's and rotate's, test
 * events and resends limited per user, and no secret in any log line.
 */

configureForFile({ ...WEBHOOK_TEST_ENV, WEBHOOK_ALLOW_PRIVATE_URLS: 'true' });

let handle: DatabaseHandle;
let receiver: Receiver;
const logged: string[] = [];
let logs: CapturedLogs | undefined;
const createCaller = createCallerFactory(internalRouter);
const callerFor = (user: { id: string; email: string } | undefined) =>
  createCaller(createInnerContext({ db: handle.db, sessionUser: user ? { ...user, name: null } : undefined }));

beforeAll(async () => {
  handle = await createTestDatabase();
  await seedDemo(handle.db);
  receiver = await startReceiver();
  for (const level of ['log', 'info', 'warn', 'error', 'debug'] as const) {
    vi.spyOn(console, level).mockImplementation((...args: unknown[]) => void logged.push(args.map(String).join(' ')));
  }
  logs = captureLogs('trace', logged);
});
afterAll(async () => {
  vi.restoreAllMocks();
  logs?.restore();
  await receiver?.close();
  await handle?.close();
});

describe('webhooks router', () => {
  it('manages only the signed-in user’s endpoints, and never shows a secret again', async () => {
    await expect(callerFor(undefined).webhooks.list()).rejects.toMatchObject({ message: 'Sign in first.' });
    const alice = callerFor(DEMO_USERS.alice);
    const bob = callerFor(DEMO_USERS.bob);
    const created = await alice.webhooks.create({ url: receiver.url, eventTypes: ['contract.updated'] });
    expect(created.secret).toMatch(/^whsec_/);
    const listed = JSON.stringify(await alice.webhooks.list());
    expect(listed).toContain(created.endpoint.id);
    expect(listed).not.toContain(created.secret.slice(6, 30));
    expect(listed).not.toMatch(/ciphertext|v1\.[0-9a-f]{8}\./);
    expect(await bob.webhooks.list()).toEqual([]);
    for (const attempt of [
      () => bob.webhooks.pause({ id: created.endpoint.id }),
      () => bob.webhooks.rotateSecret({ id: created.endpoint.id }),
      () => bob.webhooks.sendTest({ id: created.endpoint.id }),
      () => bob.webhooks.deliveries({ endpointId: created.endpoint.id }),
      () => bob.webhooks.delete({ id: created.endpoint.id }),
    ]) {
      await expect(attempt()).rejects.toMatchObject({ cause: { code: 'not_found' } });
    }
    // Refused by the input schema (a 400 invalid_request through the app's endpoint).
    await expect(alice.webhooks.create({ url: receiver.url, eventTypes: [] })).rejects.toMatchObject({ code: 'BAD_REQUEST', cause: { name: 'ZodError' } });
    await expect(alice.webhooks.create({ url: receiver.url, renewalOffsets: [30, 30] })).rejects.toMatchObject({ code: 'BAD_REQUEST', cause: { name: 'ZodError' } });
    await expect(alice.webhooks.create({ url: 'https://127.0.0.1.nip.io.invalid:1/x' })).rejects.toMatchObject({ cause: { code: 'invalid_request' } });

    expect((await alice.webhooks.pause({ id: created.endpoint.id })).status).toBe('paused');
    await expect(alice.webhooks.sendTest({ id: created.endpoint.id })).rejects.toMatchObject({ cause: { code: 'conflict' } });
    expect((await alice.webhooks.resume({ id: created.endpoint.id })).status).toBe('active');
    const rotated = await alice.webhooks.rotateSecret({ id: created.endpoint.id });
    const tested = await alice.webhooks.sendTest({ id: created.endpoint.id });
    expect(tested).toMatchObject({ state: 'succeeded', lastStatusCode: 200 });
    expect(verify(rotated.secret, receiver.received.at(-1)!).type).toBe('webhook.test');
    expect(verify(created.secret, receiver.received.at(-1)!).type).toBe('webhook.test');
    const [delivery] = await alice.webhooks.deliveries({ endpointId: created.endpoint.id });
    expect(await alice.webhooks.resend({ deliveryId: delivery!.id })).toMatchObject({ state: 'succeeded' });
    await expect(bob.webhooks.resend({ deliveryId: delivery!.id })).rejects.toMatchObject({ cause: { code: 'not_found' } });
    await alice.webhooks.delete({ id: created.endpoint.id });
    expect(await alice.webhooks.list()).toEqual([]);

    // Nothing secret reached the log at any point.
    const log = logged.join('\n');
    for (const secret of [created.secret, rotated.secret]) expect(log).not.toContain(secret.slice(6, 30));
  });

  it('test events and resends count in the user’s limit of 60 an hour', async () => {
    const [user] = await handle.db.insert(users).values({ email: `limit-${crypto.randomUUID()}@example.com` }).returning();
    const caller = callerFor({ id: user!.id, email: user!.email });
    const { endpoint } = await caller.webhooks.create({ url: receiver.url });
    for (let i = 0; i < 60; i++) await caller.webhooks.sendTest({ id: endpoint.id });
    await expect(caller.webhooks.sendTest({ id: endpoint.id })).rejects.toMatchObject({ cause: { code: 'rate_limited' } });
    const [delivery] = await caller.webhooks.deliveries({ endpointId: endpoint.id });
    await expect(caller.webhooks.resend({ deliveryId: delivery!.id })).rejects.toMatchObject({ cause: { code: 'rate_limited' } });
    // Another user's limit is their own.
    const other = await callerFor(DEMO_USERS.carol).webhooks.create({ url: receiver.url });
    expect(await callerFor(DEMO_USERS.carol).webhooks.sendTest({ id: other.endpoint.id })).toMatchObject({ state: 'succeeded' });
  }, 60_000);
});
