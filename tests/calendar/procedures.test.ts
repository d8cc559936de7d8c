import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { DatabaseHandle } from '@/db/client';
import { calendarFeeds } from '@/db/schema';
import { DEMO_USERS, seedDemo } from '@/db/seed/demo';
import { MAX_ACTIVE_FEEDS } from '@/server/calendar/constants';
import { createCalendarFeed, findActiveFeed } from '@/server/calendar/service';
import { hashFeedToken } from '@/server/calendar/token-format';
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

const createCaller = createCallerFactory(internalRouter);
/** The headers Next.js gives the app's tRPC endpoint behind a proxy at contracts.example.com. */
const PROXY_HEADERS = { 'x-forwarded-host': 'contracts.example.com', 'x-forwarded-proto': 'https' };

function callerFor(user: keyof typeof DEMO_USERS | undefined, headers: Record<string, string> = PROXY_HEADERS) {
  const sessionUser = user ? { id: DEMO_USERS[user].id, email: DEMO_USERS[user].email, name: null } : undefined;
  return createCaller(createInnerContext({ db: handle.db, sessionUser, headers: new Headers(headers) }));
}

const FEED_URL = /^https:\/\/contracts\.example\.com\/api\/v1\/calendar\/(cdcal_[0-9A-Za-z]{38})\.ics$/;

describe('calendar feed procedures (internal tRPC router)', () => {
  it('create returns the feed URL once; list and the database hold only the hint and the hash', async () => {
    const created = await callerFor('alice').calendarFeeds.create({ name: '  Work calendar  ' });
    const token = FEED_URL.exec(created.url)?.[1];
    expect(token, created.url).toBeDefined();
    expect(created.webcalUrl).toBe(created.url.replace('https://', 'webcal://'));
    expect(created.feed).toMatchObject({ name: 'Work calendar', status: 'active', hint: `cdcal_…${token!.slice(-4)}`, lastUsedAt: null, revokedAt: null });

    const listed = await callerFor('alice').calendarFeeds.list();
    expect(listed.map((f) => f.id)).toContain(created.feed.id);
    expect(JSON.stringify(listed)).not.toContain(token!.slice('cdcal_'.length, -4));
    expect(listed[0]).not.toHaveProperty('tokenHash');

    const rows = await handle.query<Record<string, unknown>>('select * from calendar_feeds where id = $1', [created.feed.id]);
    expect(rows[0]!.token_hash).toBe(hashFeedToken(token!));
    expect(JSON.stringify(rows)).not.toContain(token!.slice('cdcal_'.length, -4));
    expect(logged.join('\n')).not.toContain(token!);
    // The URL's token opens the feed: it is the one that was stored.
    expect(await findActiveFeed(handle.db, token)).toEqual({ feedId: created.feed.id, userId: DEMO_USERS.alice.id });
  });

  it('writes the URL with the origin the request came through', async () => {
    const local = await callerFor('carol', { host: 'localhost:3000', 'x-forwarded-proto': 'http' }).calendarFeeds.create({ name: 'local' });
    expect(local.url).toMatch(/^http:\/\/localhost:3000\/api\/v1\/calendar\/cdcal_[0-9A-Za-z]{38}\.ics$/);
    expect(local.webcalUrl.startsWith('webcal://localhost:3000/api/v1/calendar/')).toBe(true);
    // A Host that makes no URL is refused, not written into a link.
    await expect(callerFor('carol', { 'x-forwarded-host': 'bad host/x' }).calendarFeeds.create({ name: 'bad' })).rejects.toMatchObject({
      code: 'BAD_REQUEST',
    });
  });

  it('validates the name', async () => {
    await expect(callerFor('bob').calendarFeeds.create({ name: '   ' })).rejects.toMatchObject({ code: 'BAD_REQUEST' });
    await expect(callerFor('bob').calendarFeeds.create({ name: 'x'.repeat(65) })).rejects.toMatchObject({ code: 'BAD_REQUEST' });
    expect((await callerFor('bob').calendarFeeds.create({ name: 'x'.repeat(64) })).feed.name).toHaveLength(64);
  });

  it('refuses every procedure when signed out', async () => {
    await expect(callerFor(undefined).calendarFeeds.list()).rejects.toMatchObject({ code: 'UNAUTHORIZED' });
    await expect(callerFor(undefined).calendarFeeds.create({ name: 'x' })).rejects.toMatchObject({ code: 'UNAUTHORIZED' });
    await expect(callerFor(undefined).calendarFeeds.revoke({ id: '3f2b6c1e-8a4d-4c2e-9b7a-0d1e2f3a4b5c' })).rejects.toMatchObject({
      code: 'UNAUTHORIZED',
    });
  });

  it("revokes the own feed (kept in the list as revoked, idempotently) but not another user's feed", async () => {
    const { feed, url } = await callerFor('carol').calendarFeeds.create({ name: 'to revoke' });
    const token = FEED_URL.exec(url)![1];
    await expect(callerFor('alice').calendarFeeds.revoke({ id: feed.id })).rejects.toMatchObject({ code: 'NOT_FOUND' });
    const [stillActive] = await handle.db.select().from(calendarFeeds).where(eq(calendarFeeds.id, feed.id));
    expect(stillActive!.revokedAt).toBeNull();
    expect(await findActiveFeed(handle.db, token)).toBeDefined();
    expect((await callerFor('alice').calendarFeeds.list()).map((f) => f.id)).not.toContain(feed.id);

    const revoked = await callerFor('carol').calendarFeeds.revoke({ id: feed.id });
    expect(revoked.status).toBe('revoked');
    const again = await callerFor('carol').calendarFeeds.revoke({ id: feed.id });
    expect(again.revokedAt).toEqual(revoked.revokedAt);
    expect((await callerFor('carol').calendarFeeds.list()).find((f) => f.id === feed.id)?.status).toBe('revoked');
    expect(await findActiveFeed(handle.db, token)).toBeUndefined();
    await expect(callerFor('carol').calendarFeeds.revoke({ id: 'not-a-uuid' })).rejects.toMatchObject({ code: 'BAD_REQUEST' });
  });

  it(`allows at most ${MAX_ACTIVE_FEEDS} active feeds, even when created concurrently; a revoked one frees a place`, async () => {
    const user = DEMO_USERS.bob.id;
    const existing = (await callerFor('bob').calendarFeeds.list()).filter((f) => f.status === 'active').length;
    const attempts = MAX_ACTIVE_FEEDS - existing + 5;
    const results = await Promise.allSettled(
      Array.from({ length: attempts }, (_, i) => createCalendarFeed(handle.db, user, { name: `feed ${i}` }, 'https://contracts.example.com')),
    );
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(MAX_ACTIVE_FEEDS - existing);
    const refused = results.find((r) => r.status === 'rejected') as PromiseRejectedResult;
    expect(refused.reason.message).toMatch(/10 active calendar feeds/);
    await expect(callerFor('bob').calendarFeeds.create({ name: 'one more' })).rejects.toMatchObject({ code: 'CONFLICT' });

    const [first] = await callerFor('bob').calendarFeeds.list();
    await callerFor('bob').calendarFeeds.revoke({ id: first!.id });
    expect((await callerFor('bob').calendarFeeds.create({ name: 'in the freed place' })).feed.status).toBe('active');
    // API keys have their own limit: bob's feeds do not count against it, nor keys against feeds.
    expect((await callerFor('bob').apiKeys.create({ name: 'still possible' })).apiKey.status).toBe('active');
  });
});
