import { and, eq } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { DatabaseHandle } from '@/db/client';
import { accessTokens, users } from '@/db/schema';
import { DEMO_USERS, seedDemo } from '@/db/seed/demo';
import { MAX_ACTIVE_TOKENS, type TokenKind } from '@/lib/tokens';
import { hashToken } from '@/server/access/token-format';
import { clearVerifiedTokenCache, createToken, verifyToken } from '@/server/access/tokens';
import { createCallerFactory, createInnerContext } from '@/server/trpc/init';
import { internalRouter } from '@/server/trpc/root';
import { configureForFile } from '../helpers/config';
import { captureLogs, type CapturedLogs } from '../helpers/logs';
import { createTestDatabase } from '../helpers/db';
import { expectAppError } from '../helpers/errors';

// Behind one trusted proxy, which forwards the host the browser addressed (X-Forwarded-Host).
configureForFile({ TRUSTED_PROXY_HOPS: '1', CLIENT_ADDRESS_HEADER: undefined, AUTH_URL: undefined });

let handle: DatabaseHandle;
const logged: string[] = [];
let logs: CapturedLogs | undefined;

beforeAll(async () => {
  handle = await createTestDatabase();
  await seedDemo(handle.db);
  for (const level of ['log', 'info', 'warn', 'error', 'debug'] as const) {
    vi.spyOn(console, level).mockImplementation((...args: unknown[]) => {
      logged.push(args.map(String).join(' '));
    });
  }
  logs = captureLogs('trace', logged);
});
afterAll(async () => {
  vi.restoreAllMocks();
  logs?.restore();
  await handle?.close();
});
afterEach(() => clearVerifiedTokenCache());

const createCaller = createCallerFactory(internalRouter);
/** The headers Next.js gives the app's tRPC endpoint behind a proxy at contracts.example.com. */
const PROXY_HEADERS = { 'x-forwarded-host': 'contracts.example.com', 'x-forwarded-proto': 'https' };

type User = keyof typeof DEMO_USERS | { id: string; email: string };
const sessionOf = (user: User) => (typeof user === 'string' ? { id: DEMO_USERS[user].id, email: DEMO_USERS[user].email, name: null } : { ...user, name: null });

function callerFor(user: User | undefined, headers: Record<string, string> = PROXY_HEADERS) {
  return createCaller(createInnerContext({ db: handle.db, sessionUser: user ? sessionOf(user) : undefined, headers: new Headers(headers) }));
}

/** A user of its own, for a test that fills a limit. */
async function newUser(): Promise<{ id: string; email: string }> {
  const email = `limits-${crypto.randomUUID()}@example.com`;
  const [user] = await handle.db.insert(users).values({ email }).returning({ id: users.id, email: users.email });
  return user!;
}

/** The settings procedures of a kind, with the secret a creation returns. */
const procedures = {
  api_key: {
    router: (user: User | undefined) => callerFor(user).apiKeys,
    create: async (user: User, name: string) => {
      const created = await callerFor(user).apiKeys.create({ name });
      return { secret: created.secret, token: created.token };
    },
  },
  calendar_feed: {
    router: (user: User | undefined) => callerFor(user).calendarFeeds,
    create: async (user: User, name: string) => {
      const created = await callerFor(user).calendarFeeds.create({ name });
      return { secret: created.secret, token: created.token };
    },
  },
} satisfies Record<TokenKind, unknown>;

describe.each(['api_key', 'calendar_feed'] as const)('%s procedures (internal tRPC router)', (kind) => {
  const { router, create } = procedures[kind];
  const prefix = kind === 'api_key' ? 'cdapi_' : 'cdcal_';

  it('create returns the secret once; the list and the database hold only the hint and the hash', async () => {
    const created = await create('alice', '  Nightly ETL  ');
    expect(created.secret).toMatch(new RegExp(`^${prefix}[0-9A-Za-z]{38}$`));
    expect(created.token).toMatchObject({ name: 'Nightly ETL', status: 'active', hint: `${prefix}…${created.secret.slice(-4)}`, lastUsedAt: null, revokedAt: null });

    const listed = await router('alice').list();
    expect(listed.map((t) => t.id)).toContain(created.token.id);
    expect(JSON.stringify(listed)).not.toContain(created.secret.slice(prefix.length, -4));
    expect(listed[0]).not.toHaveProperty('tokenHash');

    const rows = await handle.query<Record<string, unknown>>('select * from access_tokens where id = $1', [created.token.id]);
    expect(rows[0]).toMatchObject({ kind, token_hash: hashToken(created.secret) });
    expect(JSON.stringify(rows)).not.toContain(created.secret.slice(prefix.length, -4));
    expect(logged.join('\n')).not.toContain(created.secret);
    // The secret opens exactly its token, of its own kind only.
    expect(await verifyToken(handle.db, kind, created.secret)).toMatchObject({ tokenId: created.token.id, userId: DEMO_USERS.alice.id });
    expect(await verifyToken(handle.db, kind === 'api_key' ? 'calendar_feed' : 'api_key', created.secret)).toBeUndefined();
  });

  it('validates the name', async () => {
    await expectAppError(router('bob').create({ name: '   ' }), 'invalid_request');
    await expectAppError(router('bob').create({ name: 'x'.repeat(65) }), 'invalid_request');
    expect((await create('bob', 'x'.repeat(64))).token.name).toHaveLength(64);
  });

  it('refuses every procedure when signed out', async () => {
    await expectAppError(router(undefined).list(), 'unauthorized');
    await expectAppError(router(undefined).create({ name: 'x' }), 'unauthorized');
    await expectAppError(router(undefined).revoke({ id: '3f2b6c1e-8a4d-4c2e-9b7a-0d1e2f3a4b5c' }), 'unauthorized');
  });

  it("revokes the own token (kept in the list as revoked, idempotently) but not another user's", async () => {
    const { secret, token } = await create('carol', 'to revoke');
    await expectAppError(router('alice').revoke({ id: token.id }), 'not_found');
    const [stillActive] = await handle.db.select().from(accessTokens).where(eq(accessTokens.id, token.id));
    expect(stillActive!.revokedAt).toBeNull();
    expect(await verifyToken(handle.db, kind, secret)).toBeDefined();
    expect((await router('alice').list()).map((t) => t.id)).not.toContain(token.id);

    const revoked = await router('carol').revoke({ id: token.id });
    expect(revoked.status).toBe('revoked');
    const again = await router('carol').revoke({ id: token.id });
    expect(again.revokedAt).toEqual(revoked.revokedAt);
    expect((await router('carol').list()).find((t) => t.id === token.id)?.status).toBe('revoked');
    // A revocation made by this process holds at once, despite the cache of API keys.
    expect(await verifyToken(handle.db, kind, secret)).toBeUndefined();
    await expectAppError(router('carol').revoke({ id: 'not-a-uuid' }), 'invalid_request');
  });

  it(`allows at most ${MAX_ACTIVE_TOKENS[kind]} active tokens, even when created concurrently; a revoked one frees a place`, async () => {
    const user = await newUser();
    const attempts = MAX_ACTIVE_TOKENS[kind] + 5;
    const results = await Promise.allSettled(Array.from({ length: attempts }, (_, i) => createToken(handle.db, kind, user.id, { name: `t${i}` })));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(MAX_ACTIVE_TOKENS[kind]);
    const refused = results.find((r) => r.status === 'rejected') as PromiseRejectedResult;
    expect(refused.reason.message).toMatch(kind === 'api_key' ? /25 active API keys/ : /10 active calendar feeds/);
    await expectAppError(router(user).create({ name: 'one more' }), 'conflict');

    const [first] = await router(user).list();
    await router(user).revoke({ id: first!.id });
    expect((await create(user, 'in the freed place')).token.status).toBe('active');
    // The other kind has its own limit.
    const other = kind === 'api_key' ? procedures.calendar_feed : procedures.api_key;
    expect((await other.create(user, 'still possible')).token.status).toBe('active');
  });
});

describe('API keys', () => {
  it('default to 90 days, allow "never" and the other choices only', async () => {
    const def = await callerFor('bob').apiKeys.create({ name: 'default expiry' });
    expect(def.token.expiresAt!.getTime() - def.token.createdAt.getTime()).toBe(90 * 86_400_000);
    const month = await callerFor('carol').apiKeys.create({ name: 'a month', expiresInDays: 30 });
    expect(month.token.expiresAt!.getTime() - month.token.createdAt.getTime()).toBe(30 * 86_400_000);
    const never = await callerFor('carol').apiKeys.create({ name: 'forever', expiresInDays: null });
    expect(never.token.expiresAt).toBeNull();
    await expectAppError(callerFor('carol').apiKeys.create({ name: 'ok', expiresInDays: 12 as never }), 'invalid_request');
  });

  it('are refused from the millisecond they expire, also when the lookup is cached', async () => {
    const { secret, token } = await createToken(handle.db, 'api_key', DEMO_USERS.alice.id, { name: 'verify', expiresInDays: 7 });
    expect(await verifyToken(handle.db, "api_key", secret)).toMatchObject({ tokenId: token.id, userId: DEMO_USERS.alice.id });
    for (const bad of [undefined, 'nonsense', secret.slice(0, -1) + (secret.endsWith('x') ? 'y' : 'x')]) {
      expect(await verifyToken(handle.db, 'api_key', bad)).toBeUndefined();
    }
    const expiresAt = token.expiresAt!;
    expect(await verifyToken(handle.db, 'api_key', secret, new Date(expiresAt.getTime() - 1))).toBeDefined();
    expect(await verifyToken(handle.db, 'api_key', secret, expiresAt)).toBeUndefined();
    clearVerifiedTokenCache();
    expect(await verifyToken(handle.db, 'api_key', secret, new Date(expiresAt.getTime() + 1))).toBeUndefined();
  });

  it('are checked without the database when mistyped', async () => {
    const spy = vi.spyOn(handle.db, 'select');
    expect(await verifyToken(handle.db, 'api_key', 'cdapi_' + 'A'.repeat(38))).toBeUndefined();
    expect(spy).not.toHaveBeenCalled();
    spy.mockRestore();
  });
});

describe('calendar feeds', () => {
  const FEED_URL = /^https:\/\/contracts\.example\.com\/api\/v1\/calendar\/(cdcal_[0-9A-Za-z]{38})\.ics$/;

  it('return the secret once as the feed addresses, with the origin the request came through', async () => {
    const created = await callerFor('alice').calendarFeeds.create({ name: 'Work calendar' });
    expect(FEED_URL.exec(created.url)?.[1]).toBe(created.secret);
    expect(created.webcalUrl).toBe(created.url.replace('https://', 'webcal://'));
    const local = await callerFor('carol', { host: 'localhost:3000', 'x-forwarded-host': 'localhost:3000', 'x-forwarded-proto': 'http' }).calendarFeeds.create({ name: 'local' });
    expect(local.url).toBe(`http://localhost:3000/api/v1/calendar/${local.secret}.ics`);
    expect(local.webcalUrl).toBe(`webcal://localhost:3000/api/v1/calendar/${local.secret}.ics`);
    // A Host that makes no URL is refused, not written into a link.
    await expectAppError(callerFor('carol', { 'x-forwarded-host': 'bad host/x' }).calendarFeeds.create({ name: 'bad' }), 'invalid_request');
  });
});

describe('last use', () => {
  it.each(['api_key', 'calendar_feed'] as const)('of a %s is written at most once a minute, in the background', async (kind) => {
    const { secret, token } = await createToken(handle.db, kind, DEMO_USERS.alice.id, { name: 'usage' });
    const t0 = new Date(Date.now() + 1000);
    const lastUsed = async () => (await handle.db.select({ at: accessTokens.lastUsedAt }).from(accessTokens).where(and(eq(accessTokens.id, token.id))))[0]!.at;
    await verifyToken(handle.db, kind, secret, t0);
    await vi.waitFor(async () => expect(await lastUsed()).toEqual(t0));
    await verifyToken(handle.db, kind, secret, new Date(t0.getTime() + 59_000));
    await new Promise((r) => setTimeout(r, 100));
    expect(await lastUsed()).toEqual(t0);
    const t2 = new Date(t0.getTime() + 60_000);
    await verifyToken(handle.db, kind, secret, t2);
    await vi.waitFor(async () => expect(await lastUsed()).toEqual(t2));
  });
});
