import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '@/db/client';
import { webhookEndpoints } from '@/db/schema';
import { DEMO_USERS, seedDemo } from '@/db/seed/demo';
import { MAX_WEBHOOK_ENDPOINTS, RESPONSE_EXCERPT_BYTES, WEBHOOK_EVENT_TYPES } from '@/lib/webhooks';
import { secretBox, webhookSecretBox } from '@/server/access/secret-box';
import { isPublicAddress, type Resolver } from '@/server/webhooks/destination';
import { createEndpoint, deliveryLog, rotateSecret, sendTestEvent } from '@/server/webhooks/endpoints';
import { applyConfig, configureForFile } from '../helpers/config';
import { createTestDatabase } from '../helpers/db';
import { clearWebhooks, PRIVATE_OK, receiverEndpoint, startReceiver, testClock, testWorker, verify, WEBHOOK_TEST_ENV, type Receiver } from './support';

/**
 * What keeps webhooks from being turned against us or our users: destinations refused by
 * address at creation and again at delivery (DNS rebinding), no redirects, a timeout, a
 * bounded read, secrets stored so a dump alone forges nothing, rotation, the endpoint limit.
 */

configureForFile(WEBHOOK_TEST_ENV);

let handle: DatabaseHandle;
let receiver: Receiver;
const ALICE = DEMO_USERS.alice.id;
const PUBLIC_ONLY = { allowPrivate: false, allowHttp: true };
const PRODUCTION = { allowPrivate: false, allowHttp: false };

beforeAll(async () => {
  handle = await createTestDatabase();
  await seedDemo(handle.db);
});
afterAll(() => handle?.close());
beforeEach(async () => {
  receiver = await startReceiver();
});
afterEach(async () => {
  await receiver.close();
  await clearWebhooks(handle.db);
});

const resolverOf = (...addresses: string[]): Resolver => async () => addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));

describe('addresses', () => {
  it.each([
    ['127.0.0.1', false], ['10.1.2.3', false], ['172.16.0.1', false], ['172.31.255.255', false], ['192.168.1.1', false],
    ['169.254.169.254', false], ['100.64.0.1', false], ['0.0.0.0', false], ['224.0.0.1', false], ['255.255.255.255', false],
    ['::1', false], ['::', false], ['fe80::1', false], ['fd00:ec2::254', false], ['fc00::1', false], ['::ffff:127.0.0.1', false],
    ['::ffff:169.254.169.254', false], ['64:ff9b::a9fe:a9fe', false], ['2002:7f00:1::', false], ['ff02::1', false],
    ['93.184.216.34', true], ['8.8.8.8', true], ['172.32.0.1', true], ['2606:4700:4700::1111', true], ['64:ff9b::808:808', true],
  ])('%s is public: %s', (address, expected) => {
    expect(isPublicAddress(address)).toBe(expected);
  });
});

describe('refused at creation', () => {
  it.each([
    ['loopback', 'https://127.0.0.1/hooks', undefined, /127\.0\.0\.1, a private/],
    ['loopback in another notation', 'https://0x7f000001/hooks', undefined, /127\.0\.0\.1/],
    ['decimal loopback', 'https://2130706433/hooks', undefined, /127\.0\.0\.1/],
    ['IPv6 loopback', 'https://[::1]/hooks', undefined, /::1/],
    ['IPv4-mapped loopback', 'https://[::ffff:127.0.0.1]/hooks', undefined, /private/],
    ['metadata service', 'https://169.254.169.254/latest/meta-data', undefined, /169\.254\.169\.254/],
    ['a name for the metadata service', 'https://metadata.google.internal/x', resolverOf('169.254.169.254'), /resolves to 169\.254\.169\.254/],
    ['localhost', 'https://localhost:8080/x', resolverOf('127.0.0.1', '::1'), /resolves to 127\.0\.0\.1/],
    ['a name with one private address among public ones', 'https://mixed.example.com/x', resolverOf('93.184.216.34', '10.0.0.5'), /10\.0\.0\.5/],
    ['a private network', 'https://10.0.0.8/x', undefined, /10\.0\.0\.8/],
    ['plain http in production', 'http://hooks.example.com/x', resolverOf('93.184.216.34'), /must start with https:\/\//],
    ['another scheme', 'ftp://hooks.example.com/x', resolverOf('93.184.216.34'), /must start with https:\/\//],
    ['credentials in the URL', 'https://user:pass@hooks.example.com/x', resolverOf('93.184.216.34'), /user name or password/],
    ['not a URL', 'hooks.example.com/x', resolverOf('93.184.216.34'), /full URL/],
    ['a name that does not resolve', 'https://nowhere.invalid/x', async () => Promise.reject(new Error('ENOTFOUND')), /does not resolve/],
    ['a URL too long', `https://hooks.example.com/${'a'.repeat(2100)}`, resolverOf('93.184.216.34'), /at most 2048/],
  ])('%s', async (_case, url, resolve, message) => {
    const error = await createEndpoint(handle.db, ALICE, { url }, { policy: PRODUCTION, resolve }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'invalid_request', details: [{ param: 'url' }] });
    expect((error as Error).message).toMatch(message);
    expect(await handle.db.select().from(webhookEndpoints)).toHaveLength(0);
  });

  it('a public https URL is accepted', async () => {
    const { endpoint, secret } = await createEndpoint(handle.db, ALICE, { url: 'https://hooks.example.com/contracts' }, { policy: PRODUCTION, resolve: resolverOf('93.184.216.34') });
    expect(endpoint).toMatchObject({ url: 'https://hooks.example.com/contracts', status: 'active', renewalOffsets: [90, 30, 7] });
    // Every event type by default.
    expect([...endpoint.eventTypes].sort()).toEqual([...WEBHOOK_EVENT_TYPES].sort());
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(endpoint.secretHint).toBe(`whsec_…${secret.slice(-5, -1)}`);
  });

  it('every invalid field is named, in the shared wording of a 400', async () => {
    const error = await createEndpoint(handle.db, ALICE, { url: 'https://hooks.example.com/x', eventTypes: [], renewalOffsets: [] }, { policy: PRODUCTION, resolve: resolverOf('93.184.216.34') }).catch((e: unknown) => e);
    expect(error).toMatchObject({
      code: 'invalid_request',
      message: 'Choose at least one event; Give at least one offset',
      details: [
        { param: 'eventTypes', message: 'Choose at least one event.' },
        { param: 'renewalOffsets', message: 'Give at least one offset.' },
      ],
    });
  });

  it(`at most ${MAX_WEBHOOK_ENDPOINTS} endpoints per user`, async () => {
    for (let i = 0; i < MAX_WEBHOOK_ENDPOINTS; i++) await receiverEndpoint(handle.db, ALICE, receiver);
    await expect(receiverEndpoint(handle.db, ALICE, receiver)).rejects.toMatchObject({ code: 'conflict' });
    // Another user is not affected.
    await expect(receiverEndpoint(handle.db, DEMO_USERS.bob.id, receiver)).resolves.toBeDefined();
  });
});

describe('refused at delivery', () => {
  it('a name that resolved to a public address at creation and to loopback at delivery is not sent (DNS rebinding)', async () => {
    const url = receiver.url.replace('127.0.0.1', 'rebind.example.com');
    const { endpoint } = await createEndpoint(handle.db, ALICE, { url }, { policy: PUBLIC_ONLY, resolve: resolverOf('93.184.216.34') });
    const outcome = await sendTestEvent(handle.db, ALICE, endpoint.id, { policy: PUBLIC_ONLY, resolve: resolverOf('127.0.0.1') });
    expect(outcome).toMatchObject({ state: 'pending', attempts: 1, lastStatusCode: null });
    expect(outcome.lastError).toMatch(/resolves to 127\.0\.0\.1, a private/);
    expect(receiver.received).toHaveLength(0);
  });

  it('the connection goes to the address that was checked, whatever the system resolver says', async () => {
    // rebind.example.com resolves nowhere on this machine: only the checked address is used.
    const url = receiver.url.replace('127.0.0.1', 'rebind.example.com');
    const { endpoint } = await createEndpoint(handle.db, ALICE, { url }, { policy: PRIVATE_OK, resolve: resolverOf('127.0.0.1') });
    const outcome = await sendTestEvent(handle.db, ALICE, endpoint.id, { policy: PRIVATE_OK, resolve: resolverOf('127.0.0.1') });
    expect(outcome).toMatchObject({ state: 'succeeded', lastStatusCode: 200 });
    expect(receiver.received[0]!.headers.host).toBe(new URL(url).host);
  });

  it('a name that takes too long to resolve counts in the attempt\'s time', async () => {
    const { sendWebhook } = await import('@/server/webhooks/sender');
    const started = Date.now();
    const result = await sendWebhook(new URL('https://slow.example.com/x'), {}, '{}', {
      policy: PUBLIC_ONLY,
      timeoutMs: 300,
      resolve: () => new Promise((resolve) => setTimeout(() => resolve([{ address: '93.184.216.34', family: 4 }]), 5_000)),
    });
    expect(result).toMatchObject({ ok: false, statusCode: null, error: 'No complete answer within 300 ms.' });
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('redirects are not followed', async () => {
    const other = await startReceiver();
    try {
      receiver.fallback = { status: 307, headers: { location: other.url } };
      const { endpoint } = await receiverEndpoint(handle.db, ALICE, receiver);
      const outcome = await sendTestEvent(handle.db, ALICE, endpoint.id, { policy: PRIVATE_OK });
      expect(outcome).toMatchObject({ state: 'pending', lastStatusCode: 307 });
      expect(outcome.lastError).toMatch(/Redirects are not followed/);
      expect(other.received).toHaveLength(0);
    } finally {
      await other.close();
    }
  });

  it('a receiver that does not answer in time fails the attempt; a huge answer is read only up to 4 KiB', async () => {
    const { endpoint } = await receiverEndpoint(handle.db, ALICE, receiver);
    receiver.replies.push({ status: 200, delayMs: 2_000 }, { status: 200, body: 'x'.repeat(1_000_000) });
    const worker = testWorker(handle.db, { timeoutMs: 300 });
    const started = Date.now();
    await sendTestEvent(handle.db, ALICE, endpoint.id, { policy: PRIVATE_OK });
    // That attempt used the default 10 s timeout and got its answer; now a worker with 300 ms.
    await sendTestEvent(handle.db, ALICE, endpoint.id, { policy: PRIVATE_OK });
    expect(Date.now() - started).toBeLessThan(8_000);
    const log = await deliveryLog(handle.db, ALICE, endpoint.id);
    const huge = log.find((d) => d.lastResponse?.startsWith('xxx'));
    expect(huge).toMatchObject({ state: 'succeeded' });
    expect(Buffer.byteLength(huge!.lastResponse!)).toBe(RESPONSE_EXCERPT_BYTES);
    receiver.replies.push({ status: 200, delayMs: 2_000 });
    const clock = testClock();
    await handle.query(`UPDATE webhook_deliveries SET state = 'succeeded'`);
    const { insertTestDelivery } = await import('@/db/queries/webhooks');
    const id = await insertTestDelivery(handle.db, endpoint.id, { note: 'slow' }, clock());
    expect(await worker.deliverNow(id)).toBe(true);
    const slow = (await deliveryLog(handle.db, ALICE, endpoint.id)).find((d) => d.id === id)!;
    expect(slow).toMatchObject({ state: 'pending', lastStatusCode: null });
    expect(slow.lastError).toMatch(/No complete answer within/);
    expect(slow.lastDurationMs).toBeLessThan(1_500);
  });
});

describe('secrets', () => {
  it('are stored encrypted: the row holds neither the secret nor its key, and opens only with the key and on its own row', async () => {
    const { endpoint, secret } = await receiverEndpoint(handle.db, ALICE, receiver);
    const [row] = await handle.query<Record<string, unknown>>(`SELECT * FROM webhook_endpoints WHERE id = $1`, [endpoint.id]);
    const dump = JSON.stringify(row);
    const keyBase64 = secret.slice('whsec_'.length);
    expect(dump).not.toContain(keyBase64.slice(0, 20));
    expect(dump).not.toContain(Buffer.from(keyBase64, 'base64').toString('hex').slice(0, 20));
    const sealed = String(row!.secret_ciphertext);
    expect(webhookSecretBox().open(sealed, endpoint.id)).toBe(secret);
    expect(() => secretBox('another key, at least thirty-two characters').open(sealed, endpoint.id)).toThrow(/another key/);
    expect(() => webhookSecretBox().open(sealed, '00000000-0000-4000-8000-000000000000')).toThrow(/does not open/);
  });

  it('without WEBHOOK_ENCRYPTION_KEY, the key derives from AUTH_SECRET (what the server and the command line share)', async () => {
    const authSecret = 'an-auth-secret-of-at-least-32-characters-long';
    await applyConfig({ WEBHOOK_ENCRYPTION_KEY: undefined, AUTH_SECRET: authSecret });
    try {
      const sealed = webhookSecretBox().seal('whsec_x', 'row');
      expect(secretBox(authSecret).open(sealed, 'row')).toBe('whsec_x');
    } finally {
      await applyConfig({ ...WEBHOOK_TEST_ENV, AUTH_SECRET: undefined });
    }
  });

  it('rotation: both signatures for 24 hours, each verifiable; then only the new one', async () => {
    const { endpoint, secret: old } = await receiverEndpoint(handle.db, ALICE, receiver);
    const clock = testClock();
    const { secret: fresh } = await rotateSecret(handle.db, ALICE, endpoint.id, clock());
    expect(fresh).not.toBe(old);
    const { insertTestDelivery } = await import('@/db/queries/webhooks');
    const worker = testWorker(handle.db, { clock });
    await worker.deliverNow(await insertTestDelivery(handle.db, endpoint.id, { n: 1 }, clock()));
    const [both] = receiver.received;
    expect(String(both!.headers['webhook-signature']).split(' ')).toHaveLength(2);
    expect(verify(fresh, both!).type).toBe('webhook.test');
    expect(verify(old, both!).type).toBe('webhook.test');

    clock.advance(24 * 3_600_000);
    await worker.deliverNow(await insertTestDelivery(handle.db, endpoint.id, { n: 2 }, clock()));
    const later = receiver.received[1]!;
    expect(String(later.headers['webhook-signature']).split(' ')).toHaveLength(1);
    expect(verify(fresh, later).data).toEqual({ n: 2 });
    expect(() => verify(old, later)).toThrow();
  });
});
