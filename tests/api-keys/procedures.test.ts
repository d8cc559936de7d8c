import { eq } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { DatabaseHandle } from '@/db/client';
import { apiKeys } from '@/db/schema';
import { DEMO_USERS, seedDemo } from '@/db/seed/demo';
import { MAX_ACTIVE_KEYS } from '@/server/api-keys/constants';
import { createApiKey } from '@/server/api-keys/service';
import { clearVerifiedKeyCache, verifyApiKey } from '@/server/api-keys/verify';
import { createCallerFactory, createInnerContext } from '@/server/trpc/init';
import { internalRouter } from '@/server/trpc/root';
import { createTestDatabase } from '../helpers/db';

let handle: DatabaseHandle;
const logged: string[] = [];

beforeAll(async () => {
  handle = await createTestDatabase();
  await seedDemo(handle.db);
  for (const level of ['log', 'info', 'warn', 'error', 'debug'] as const) {
    vi.spyOn(console, level).mockImplementation((...args: unknown[]) => {
      logged.push(args.map(String).join(' '));
    });
  }
});
afterAll(async () => {
  vi.restoreAllMocks();
  await handle?.close();
});
afterEach(() => clearVerifiedKeyCache());

const createCaller = createCallerFactory(internalRouter);
function callerFor(user: keyof typeof DEMO_USERS | undefined) {
  const sessionUser = user ? { id: DEMO_USERS[user].id, email: DEMO_USERS[user].email, name: null } : undefined;
  return createCaller(createInnerContext({ db: handle.db, sessionUser }));
}

describe('API key procedures (internal tRPC router)', () => {
  it('create returns the full key once; list and the database only ever hold the hint and the hash', async () => {
    const created = await callerFor('alice').apiKeys.create({ name: '  Nightly ETL  ', expiresInDays: 30 });
    expect(created.key).toMatch(/^cdapi_[0-9A-Za-z]{38}$/);
    expect(created.apiKey).toMatchObject({ name: 'Nightly ETL', status: 'active', hint: `cdapi_…${created.key.slice(-4)}` });
    expect(created.apiKey.expiresAt!.getTime() - created.apiKey.createdAt.getTime()).toBe(30 * 86_400_000);

    const listed = await callerFor('alice').apiKeys.list();
    expect(JSON.stringify(listed)).not.toContain(created.key);
    expect(listed.map((k) => k.id)).toContain(created.apiKey.id);
    expect(listed[0]).not.toHaveProperty('keyHash');

    const rows = await handle.query('select * from api_keys');
    const secretPart = created.key.slice('cdapi_'.length);
    expect(JSON.stringify(rows)).not.toContain(secretPart.slice(0, 20));
    expect(logged.join('\n')).not.toContain(created.key);
  });

  it('defaults to 90 days, allows "never", and validates the name', async () => {
    const def = await callerFor('bob').apiKeys.create({ name: 'default expiry' });
    expect(def.apiKey.expiresAt!.getTime() - def.apiKey.createdAt.getTime()).toBe(90 * 86_400_000);
    const never = await callerFor('bob').apiKeys.create({ name: 'forever', expiresInDays: null });
    expect(never.apiKey.expiresAt).toBeNull();
    await expect(callerFor('bob').apiKeys.create({ name: '   ' })).rejects.toMatchObject({ code: 'BAD_REQUEST' });
    await expect(callerFor('bob').apiKeys.create({ name: 'x'.repeat(65) })).rejects.toMatchObject({ code: 'BAD_REQUEST' });
    await expect(callerFor('bob').apiKeys.create({ name: 'ok', expiresInDays: 12 as never })).rejects.toMatchObject({
      code: 'BAD_REQUEST',
    });
  });

  it('refuses every procedure when signed out', async () => {
    await expect(callerFor(undefined).apiKeys.list()).rejects.toMatchObject({ code: 'UNAUTHORIZED' });
    await expect(callerFor(undefined).apiKeys.create({ name: 'x' })).rejects.toMatchObject({ code: 'UNAUTHORIZED' });
  });

  it('revokes the own key (kept in the list as revoked) but not another user\'s key', async () => {
    const { apiKey } = await callerFor('carol').apiKeys.create({ name: 'to revoke' });
    await expect(callerFor('alice').apiKeys.revoke({ id: apiKey.id })).rejects.toMatchObject({ code: 'NOT_FOUND' });
    const [stillActive] = await handle.db.select().from(apiKeys).where(eq(apiKeys.id, apiKey.id));
    expect(stillActive!.revokedAt).toBeNull();

    const revoked = await callerFor('carol').apiKeys.revoke({ id: apiKey.id });
    expect(revoked.status).toBe('revoked');
    const again = await callerFor('carol').apiKeys.revoke({ id: apiKey.id });
    expect(again.revokedAt).toEqual(revoked.revokedAt);
    expect((await callerFor('carol').apiKeys.list()).find((k) => k.id === apiKey.id)?.status).toBe('revoked');
  });

  it(`allows at most ${MAX_ACTIVE_KEYS} active keys, even when created concurrently`, async () => {
    const user = DEMO_USERS.bob.id;
    const existing = (await callerFor('bob').apiKeys.list()).filter((k) => k.status === 'active').length;
    const attempts = MAX_ACTIVE_KEYS - existing + 5;
    const results = await Promise.allSettled(
      Array.from({ length: attempts }, (_, i) => createApiKey(handle.db, user, { name: `k${i}`, expiresInDays: 7 })),
    );
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(MAX_ACTIVE_KEYS - existing);
    const refused = results.find((r) => r.status === 'rejected') as PromiseRejectedResult;
    expect(refused.reason.message).toMatch(/25 active API keys/);
    await expect(callerFor('bob').apiKeys.create({ name: 'one more' })).rejects.toMatchObject({ code: 'CONFLICT' });
  });
});

describe('verifyApiKey', () => {
  it('accepts a valid key and refuses malformed, unknown, expired and revoked keys alike', async () => {
    const { key, apiKey } = await createApiKey(handle.db, DEMO_USERS.alice.id, { name: 'verify', expiresInDays: 7 });
    expect(await verifyApiKey(handle.db, key)).toEqual({ keyId: apiKey.id, userId: DEMO_USERS.alice.id });
    expect(await verifyApiKey(handle.db, undefined)).toBeUndefined();
    expect(await verifyApiKey(handle.db, 'nonsense')).toBeUndefined();
    expect(await verifyApiKey(handle.db, key.slice(0, -1) + (key.endsWith("x") ? "y" : "x"))).toBeUndefined();

    const expiresAt = apiKey.expiresAt!;
    expect(await verifyApiKey(handle.db, key, new Date(expiresAt.getTime() - 1))).toBeDefined();
    // Expiry is compared to the millisecond, also when the lookup is cached.
    expect(await verifyApiKey(handle.db, key, expiresAt)).toBeUndefined();
    clearVerifiedKeyCache();
    expect(await verifyApiKey(handle.db, key, new Date(expiresAt.getTime() + 1))).toBeUndefined();
  });

  it('looks up a mistyped key without touching the database', async () => {
    const spy = vi.spyOn(handle.db, 'select');
    expect(await verifyApiKey(handle.db, 'cdapi_' + 'A'.repeat(38))).toBeUndefined();
    expect(spy).not.toHaveBeenCalled();
    spy.mockRestore();
  });

  it('sees a revocation made in this process at once, despite the cache', async () => {
    const { key, apiKey } = await callerFor('alice').apiKeys.create({ name: 'cached' });
    expect(await verifyApiKey(handle.db, key)).toBeDefined();
    await callerFor('alice').apiKeys.revoke({ id: apiKey.id });
    expect(await verifyApiKey(handle.db, key)).toBeUndefined();
  });

  it('writes last_used_at at most once a minute per key, in the background', async () => {
    const { key, apiKey } = await createApiKey(handle.db, DEMO_USERS.alice.id, { name: 'usage', expiresInDays: 7 });
    const t0 = new Date(Date.now() + 1000);
    const lastUsed = async () =>
      (await handle.db.select({ at: apiKeys.lastUsedAt }).from(apiKeys).where(eq(apiKeys.id, apiKey.id)))[0]!.at;
    await verifyApiKey(handle.db, key, t0);
    await vi.waitFor(async () => expect(await lastUsed()).toEqual(t0));
    await verifyApiKey(handle.db, key, new Date(t0.getTime() + 59_000));
    await new Promise((r) => setTimeout(r, 100));
    expect(await lastUsed()).toEqual(t0);
    const t2 = new Date(t0.getTime() + 60_000);
    await verifyApiKey(handle.db, key, t2);
    await vi.waitFor(async () => expect(await lastUsed()).toEqual(t2));
  });
});
