import Papa from 'papaparse';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '@/db/client';
import { insertRequestLog } from '@/db/queries/key-activity';
import { insertSecurityEvents } from '@/db/queries/security-events';
import { accessTokens, requestLog, securityEvents } from '@/db/schema';
import { DEMO_ORGS, DEMO_PASSWORD, DEMO_USERS, seedDemo } from '@/db/seed/demo';
import { endAllSessions } from '@/server/auth/session-version';
import { signInWithPasswordLimited } from '@/server/auth/sign-in-limit';
import { createUserWithPassword } from '@/server/auth/users';
import { setProcessDatabase } from '@/server/database';
import { toAppError } from '@/server/errors';
import { SYSTEM_ACTOR, withActor } from '@/server/security-log/actor';
import { flushSecurityEvents } from '@/server/security-log/record';
import { runActivityRetention } from '@/server/security-log/retention';
import { securityLogCsv, securityLogPage } from '@/server/security-log/service';
import { createCallerFactory, createInnerContext } from '@/server/trpc/init';
import { internalRouter } from '@/server/trpc/root';
import { PROXY_CLIENT_ADDRESS } from '../helpers/api';
import { configureForFile } from '../helpers/config';
import { createTestDatabase, describeDriver } from '../helpers/db';

/**
 * The security log: each kind of event written with its change, with the actor, address
 * and user agent, in the log of the person it concerns and nobody else's; filters, cursor,
 * CSV; append-only against every path of the app but the retention job.
 */

configureForFile({ ...PROXY_CLIENT_ADDRESS, WEBHOOK_ALLOW_PRIVATE_URLS: 'true', AUDIT_LOG_RETENTION_DAYS: '400' });

let handle: DatabaseHandle;
const createCaller = createCallerFactory(internalRouter);
const ALICE = DEMO_USERS.alice;
const BOB = DEMO_USERS.bob;
const as = (user: { id: string; email: string }, address = '203.0.113.7') =>
  createCaller(
    createInnerContext({ db: handle.db, sessionUser: { ...user, name: null }, clientAddress: address, headers: new Headers({ 'user-agent': 'Firefox/140' }) }),
  );
const ownLog = async (user: { id: string }, kinds?: string[]) => (await securityLogPage(handle.db, { userId: user.id }, { kinds })).events;
const statusOf = (promise: Promise<unknown>) =>
  promise.then(
    () => 200,
    (error: unknown) => toAppError(error, 'test', false).status,
  );

beforeAll(async () => {
  handle = await createTestDatabase();
  await seedDemo(handle.db);
  setProcessDatabase(handle);
});
afterAll(async () => handle?.close());

describe(`security log (${describeDriver()})`, () => {
  it('records key and feed creation and revocation, with the actor, address and user agent, for the owner only', async () => {
    const alice = as(ALICE);
    const { token } = await alice.apiKeys.create({ name: 'ETL', expiresInDays: 30 });
    await alice.apiKeys.revoke({ id: token.id });
    await alice.apiKeys.revoke({ id: token.id }); // a second revoke changes nothing and logs nothing
    const feed = await alice.calendarFeeds.create({ name: 'Phone' });
    await alice.calendarFeeds.revoke({ id: feed.token.id });

    const events = await ownLog(ALICE, ['api_key.created', 'api_key.revoked', 'calendar_feed.created', 'calendar_feed.revoked']);
    const about = (id: string) => events.filter((e) => e.objectId === id).map((e) => e.kind);
    expect(about(token.id)).toEqual(['api_key.revoked', 'api_key.created']);
    expect(about(feed.token.id)).toEqual(['calendar_feed.revoked', 'calendar_feed.created']);
    expect(events.find((e) => e.objectId === token.id)).toMatchObject({ actor: ALICE.email, clientAddress: '203.0.113.7', userAgent: 'Firefox/140', object: 'ETL' });
    expect((await ownLog(BOB)).filter((e) => e.objectId === token.id || e.objectId === feed.token.id)).toEqual([]);
  });

  it('records webhook endpoints created, changed, secret rotated and deleted', async () => {
    const alice = as(ALICE);
    const { endpoint } = await alice.webhooks.create({ url: 'http://127.0.0.1:9/hooks', eventTypes: ['contract.updated'] });
    await alice.webhooks.pause({ id: endpoint.id });
    await alice.webhooks.resume({ id: endpoint.id });
    await alice.webhooks.rotateSecret({ id: endpoint.id });
    await alice.webhooks.delete({ id: endpoint.id });
    const kinds = (await ownLog(ALICE)).filter((e) => e.objectId === endpoint.id).map((e) => [e.kind, e.details?.change ?? null]);
    expect(kinds).toEqual([
      ['webhook_endpoint.deleted', null],
      ['webhook_endpoint.secret_rotated', null],
      ['webhook_endpoint.changed', 'resumed'],
      ['webhook_endpoint.changed', 'paused'],
      ['webhook_endpoint.created', null],
    ]);
    expect((await ownLog(BOB)).filter((e) => e.objectId === endpoint.id)).toEqual([]);
  });

  it('records sign-ins, failures by address (in nobody’s log for an unknown e-mail), sign-up and sign-out everywhere', async () => {
    const address = '198.51.100.23';
    expect((await signInWithPasswordLimited(handle.db, { address, email: BOB.email, password: DEMO_PASSWORD, userAgent: 'Safari/18' })).ok).toBe(true);
    expect((await signInWithPasswordLimited(handle.db, { address, email: BOB.email, password: 'wrong-password' })).ok).toBe(false);
    expect((await signInWithPasswordLimited(handle.db, { address, email: 'nobody-at-all@example.com', password: 'wrong-password' })).ok).toBe(false);
    await flushSecurityEvents();
    const bobs = await ownLog(BOB, ['sign_in.succeeded', 'sign_in.failed']);
    expect(bobs.map((e) => [e.kind, e.clientAddress])).toEqual([
      ['sign_in.failed', address],
      ['sign_in.succeeded', address],
    ]);
    expect(bobs[1]).toMatchObject({ actor: BOB.email, userAgent: 'Safari/18' });
    // The unknown e-mail's failure is kept (by address) but shown to no one, and names no e-mail.
    const orphan = await handle.db.select().from(securityEvents).where(sql`kind = 'sign_in.failed' AND subject_user_id IS NULL`);
    expect(orphan).toHaveLength(1);
    expect(JSON.stringify(orphan)).not.toContain('nobody-at-all');
    expect(await ownLog(ALICE, ['sign_in.failed'])).toEqual([]);

    const created = await withActor({ ...SYSTEM_ACTOR, clientAddress: address, userAgent: 'Edge/1' }, () =>
      createUserWithPassword(handle.db, { email: 'new-person@example.com', password: 'a-long-password' }),
    );
    expect(await ownLog(created)).toMatchObject([{ kind: 'sign_up', actor: 'new-person@example.com', clientAddress: address, userAgent: 'Edge/1' }]);

    await withActor({ ...SYSTEM_ACTOR, clientAddress: address, userAgent: 'Edge/1' }, async () => {
      await endAllSessions(handle.db, created.id);
      await endAllSessions(handle.db, created.id); // the same action ends them twice: one event
    });
    expect((await ownLog(created)).map((e) => e.kind)).toEqual(['sign_out.everywhere', 'sign_up']);
  });

  it('records a key’s expiry once, as "system", from the retention job', async () => {
    const alice = as(ALICE);
    const { token } = await alice.apiKeys.create({ name: 'short-lived', expiresInDays: 7 });
    await handle.db.update(accessTokens).set({ expiresAt: new Date(Date.now() - 60_000) }).where(sql`id = ${token.id}`);
    await runActivityRetention(handle.db, new Date());
    await runActivityRetention(handle.db, new Date());
    const expired = (await ownLog(ALICE, ['api_key.expired'])).filter((e) => e.objectId === token.id);
    expect(expired).toMatchObject([{ actor: 'system', object: 'short-lived' }]);
    expect((await ownLog(BOB, ['api_key.expired'])).filter((e) => e.objectId === token.id)).toEqual([]);
  });

  it("records an organisation key's expiry in the organisation's log and its creator's, and a member's key's in the organisations it read", async () => {
    const orgKey = await as(ALICE).apiKeys.create({ name: 'acme short-lived', expiresInDays: 7, owner: { kind: 'organization', organizationId: DEMO_ORGS.acme.id } });
    const bobsKey = await as(BOB).apiKeys.create({ name: 'bob short-lived', expiresInDays: 7 });
    await handle.db.update(accessTokens).set({ expiresAt: new Date(Date.now() - 60_000) }).where(sql`id in (${orgKey.token.id}, ${bobsKey.token.id})`);
    await runActivityRetention(handle.db, new Date());
    const acme = (await securityLogPage(handle.db, { organizationId: DEMO_ORGS.acme.id }, { kinds: ['api_key.expired'] })).events.map((e) => e.objectId);
    expect(acme).toEqual(expect.arrayContaining([orgKey.token.id, bobsKey.token.id]));
    const globex = (await securityLogPage(handle.db, { organizationId: DEMO_ORGS.globex.id }, { kinds: ['api_key.expired'] })).events.map((e) => e.objectId);
    expect(globex).toContain(bobsKey.token.id);
    expect(globex).not.toContain(orgKey.token.id);
    expect((await ownLog(ALICE, ['api_key.expired'])).map((e) => e.objectId)).toContain(orgKey.token.id);
  });

  it('filters by kind and time, pages by cursor, and answers nonsense with a 400', async () => {
    const alice = as(ALICE);
    for (let i = 0; i < 55; i++) await alice.calendarFeeds.create({ name: `feed ${i}` }).then((f) => alice.calendarFeeds.revoke({ id: f.token.id }));
    const first = await alice.securityLog.own({ kinds: ['calendar_feed.created'] });
    expect(first.events).toHaveLength(50);
    expect(first.events.every((e) => e.kind === 'calendar_feed.created')).toBe(true);
    const second = await alice.securityLog.own({ kinds: ['calendar_feed.created'], cursor: first.nextCursor! });
    expect(second.events.length).toBeGreaterThanOrEqual(6);
    expect(new Set([...first.events, ...second.events].map((e) => e.id)).size).toBe(first.events.length + second.events.length);
    expect((await alice.securityLog.own({ to: '2001-01-01' })).events).toEqual([]);
    expect((await alice.securityLog.own({ from: new Date(Date.now() - 3_600_000).toISOString(), kinds: ['calendar_feed.revoked'] })).events).toHaveLength(50);

    expect(await statusOf(alice.securityLog.own({ kinds: ['api_key.stolen'] }))).toBe(400);
    expect(await statusOf(alice.securityLog.own({ from: 'yesterday' }))).toBe(400);
    expect(await statusOf(alice.securityLog.own({ from: '2026-02-30' }))).toBe(400);
    expect(await statusOf(alice.securityLog.own({ from: '2026-02-02', to: '2026-02-01' }))).toBe(400);
    expect(await statusOf(alice.securityLog.own({ cursor: 'bm90LWEtY3Vyc29y' }))).toBe(400);
    expect(await statusOf(as(BOB).securityLog.own({ cursor: first.nextCursor! }))).toBe(200);
  });

  it('downloads as CSV with formulas neutralised', async () => {
    await as(ALICE).apiKeys.create({ name: '=HYPERLINK("http://evil.example","x")', expiresInDays: 7 });
    const csv = await securityLogCsv(handle.db, { userId: ALICE.id }, { kinds: ['api_key.created'] });
    const rows = Papa.parse<string[]>(csv.trim()).data;
    expect(rows[0]).toEqual(['time', 'kind', 'actor', 'client_address', 'user_agent', 'object_type', 'object_id', 'object', 'details']);
    expect(rows.some((r) => r[7] === `'=HYPERLINK("http://evil.example","x")`)).toBe(true);
    expect(rows.some((r) => r[7]?.startsWith('='))).toBe(false);
  });
});

describe('append-only', () => {
  it('refuses every change of a past event by the app’s statements; only the retention job deletes, and only old events', async () => {
    await insertSecurityEvents(handle.db, [
      { kind: 'api_key.created', actorKind: 'user', actorLabel: 'x', subjectUserId: ALICE.id, objectType: 'api_key', at: new Date(Date.now() - 500 * 86_400_000) },
    ]);
    const refusals = [
      () => handle.db.update(securityEvents).set({ actorLabel: 'someone else' }),
      () => handle.db.delete(securityEvents),
      () => handle.db.execute(sql`TRUNCATE security_events`),
      // Not even a transaction that sets the retention job's switch can UPDATE.
      () => handle.db.transaction(async (tx) => {
        await tx.execute(sql`SELECT set_config('app.security_log_retention', 'on', true)`);
        await tx.update(securityEvents).set({ actorLabel: 'rewritten' });
      }),
    ];
    const count = async () => (await handle.db.select({ n: sql<number>`count(*)::int` }).from(securityEvents))[0]!.n;
    const before = await count();
    for (const attempt of refusals) await expect(attempt()).rejects.toThrow();
    expect(await count()).toBe(before);
    expect(await handle.db.select().from(securityEvents).where(sql`actor_label IN ('someone else', 'rewritten')`)).toEqual([]);
    // The switch does not outlive the retention job's transaction.
    await runActivityRetention(handle.db, new Date());
    await expect(handle.db.delete(securityEvents)).rejects.toThrow();
    expect(await count()).toBe(before - 1);
  });

  it('keeps the request log to each key’s newest 1,000 rows and 7 days', async () => {
    const { token } = await as(ALICE).apiKeys.create({ name: 'busy', expiresInDays: 7 });
    const now = Date.now();
    const row = (i: number, ageMs: number) => ({ tokenId: token.id, at: new Date(now - ageMs), method: 'GET', path: `/api/v1/contracts?offset=${i}`, status: 200, durationMs: 1, requestId: `req_${String(i).padStart(32, '0')}`, bytes: 1 });
    await insertRequestLog(handle.db, [...Array.from({ length: 1005 }, (_, i) => row(i, (1005 - i) * 1000)), row(9999, 8 * 86_400_000)]);
    await runActivityRetention(handle.db, new Date());
    const kept = await handle.db.select({ path: requestLog.path }).from(requestLog).where(sql`token_id = ${token.id}`);
    expect(kept).toHaveLength(1000);
    expect(kept.map((r) => r.path)).not.toContain('/api/v1/contracts?offset=4');
    expect(kept.map((r) => r.path)).toContain('/api/v1/contracts?offset=5');
  });
});
