import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { and, eq } from 'drizzle-orm';
import type { DatabaseHandle } from '@/db/client';
import { memberships } from '@/db/schema';
import { DEMO_ORGS, DEMO_USERS, seedDemo } from '@/db/seed/demo';
import { clearVerifiedTokenCache } from '@/server/access/tokens';
import { setProcessDatabase } from '@/server/database';
import { toAppError } from '@/server/errors';
import { organizationLog, ownLog, serveSecurityLogDownload } from '@/server/security-log/download';
import { flushSecurityEvents } from '@/server/security-log/record';
import { apiRouteHandler } from '@/server/rest/route-handler';
import { createCallerFactory, createInnerContext } from '@/server/trpc/init';
import { internalRouter } from '@/server/trpc/root';
import { apiRequest, PROXY_CLIENT_ADDRESS } from '../helpers/api';
import { configureForFile } from '../helpers/config';
import { createTestDatabase, describeDriver } from '../helpers/db';

/**
 * Organisation keys in the activity views: the organisation's owners and admins see its
 * keys' usage and requests and its security log (created, edited, rolled, revoked, access
 * removed, policy changed, refused addresses); a plain member and an outsider see nothing.
 */

configureForFile({ ...PROXY_CLIENT_ADDRESS, WEBHOOK_ALLOW_PRIVATE_URLS: 'true' });

let handle: DatabaseHandle;
const createCaller = createCallerFactory(internalRouter);
const as = (user: { id: string; email: string }) =>
  createCaller(createInnerContext({ db: handle.db, sessionUser: { ...user, name: null }, clientAddress: '203.0.113.9', headers: new Headers({ 'user-agent': 'Chrome/150' }) }));
const statusOf = (promise: Promise<unknown>) =>
  promise.then(
    () => 200,
    (error: unknown) => toAppError(error, 'test', false).status,
  );
// The route handler the app serves /api/v1 with: observed, and feeding the key's usage.
const served = apiRouteHandler;
const ACME = DEMO_ORGS.acme.id;
const GLOBEX = DEMO_ORGS.globex.id;
const { alice: ALICE, bob: BOB, carol: CAROL } = DEMO_USERS;

beforeAll(async () => {
  handle = await createTestDatabase();
  await seedDemo(handle.db);
  setProcessDatabase(handle);
  clearVerifiedTokenCache();
});
afterAll(async () => handle?.close());

describe(`an organisation's activity (${describeDriver()})`, () => {
  it('shows its keys’ events to its owners and admins, the member’s own to the member, nothing to others', async () => {
    const alice = as(ALICE);
    const orgKey = await alice.apiKeys.create({ name: 'Acme ETL', expiresInDays: 30, owner: { kind: 'organization', organizationId: ACME }, allowedAddresses: ['192.0.2.0/24'] });
    await alice.apiKeys.editRestrictions({ id: orgKey.token.id, permissions: ['contracts:read'] });
    await alice.apiKeys.roll({ id: orgKey.token.id, graceHours: 1 });
    const bobsKey = await as(BOB).apiKeys.create({ name: 'bob personal', expiresInDays: 30 });
    await alice.organizationKeys.removeAccess({ organizationId: ACME, id: bobsKey.token.id });
    await alice.organizationKeys.setPolicy({ organizationId: ACME, memberKeysAllowed: false });

    // Refused from another address, twice: one event (once per key and address per hour).
    for (let i = 0; i < 2; i++) {
      const res = await served(apiRequest('GET', '/contracts?limit=1', { key: orgKey.secret, clientAddress: '198.51.100.77' }));
      expect(res.status).toBe(403);
    }
    await flushSecurityEvents();
    await alice.apiKeys.revoke({ id: orgKey.token.id });

    const log = (await alice.securityLog.organization({ organizationId: ACME })).events;
    const kinds = log.map((e) => e.kind);
    expect(kinds).toEqual([
      'api_key.revoked',
      'api_key.address_refused',
      'organization.policy_changed',
      'api_key.access_removed',
      'api_key.created', // bob's key, which read Acme when he made it
      'api_key.rolled',
      'api_key.edited',
      'api_key.created',
    ]);
    expect(log.find((e) => e.kind === 'api_key.address_refused')).toMatchObject({ clientAddress: '198.51.100.77', object: 'Acme ETL', actor: 'API key Acme ETL' });
    expect(log.find((e) => e.kind === 'api_key.rolled')).toMatchObject({ actor: ALICE.email, clientAddress: '203.0.113.9', userAgent: 'Chrome/150' });
    expect(log.find((e) => e.kind === 'organization.policy_changed')?.details).toEqual({ member_keys_allowed: false });

    // Bob (a member of Acme, not an admin) cannot read it; his own log shows his key's access removed.
    expect(await statusOf(as(BOB).securityLog.organization({ organizationId: ACME }))).toBe(403);
    expect((await as(BOB).securityLog.own({ kinds: ['api_key.access_removed'] })).events).toMatchObject([{ objectId: bobsKey.token.id, actor: ALICE.email }]);
    expect(await statusOf(as(CAROL).securityLog.organization({ organizationId: ACME }))).toBe(403);
    expect(await statusOf(as(CAROL).securityLog.organization({ organizationId: 'not-a-uuid' }))).toBe(400);
    expect((await as(CAROL).securityLog.own({})).events.filter((e) => e.objectId === orgKey.token.id)).toEqual([]);
  });

  it('shows the events of members’ keys, feeds and endpoints that reached the organisation when they were written, for good', async () => {
    const alice = as(ALICE);
    const bob = as(BOB);
    await alice.organizationKeys.setPolicy({ organizationId: ACME, memberKeysAllowed: true });
    const everything = await bob.apiKeys.create({ name: 'bob everything', expiresInDays: 30 });
    const globexOnly = await bob.apiKeys.create({ name: 'bob globex only', expiresInDays: 30, access: { kind: 'chosen', personal: false, organizationIds: [GLOBEX] } });
    const feed = await bob.calendarFeeds.create({ name: 'bob phone' });
    const { endpoint } = await bob.webhooks.create({ url: 'http://127.0.0.1:9/hooks', eventTypes: ['contract.updated'] });
    const privateHook = await bob.webhooks.create({ url: 'http://127.0.0.1:9/private', eventTypes: ['contract.updated'], access: { kind: 'chosen', personal: true, organizationIds: [] } });
    await bob.apiKeys.revoke({ id: everything.token.id });
    // Globex (bob owns it) removes its access from another of bob's keys: Globex's business, not Acme's.
    const both = await bob.apiKeys.create({ name: 'bob both', expiresInDays: 30 });
    await bob.organizationKeys.removeAccess({ organizationId: GLOBEX, id: both.token.id });

    const about = (events: { objectId: string | null; kind: string }[], id: string) => events.filter((e) => e.objectId === id).map((e) => e.kind);
    const acmeLog = async () => (await alice.securityLog.organization({ organizationId: ACME })).events;
    const log = await acmeLog();
    expect(about(log, everything.token.id)).toEqual(['api_key.revoked', 'api_key.created']);
    expect(log.find((e) => e.objectId === everything.token.id)).toMatchObject({ actor: BOB.email, clientAddress: '203.0.113.9', userAgent: 'Chrome/150' });
    expect(about(log, feed.token.id)).toEqual(['calendar_feed.created']);
    expect(about(log, endpoint.id)).toEqual(['webhook_endpoint.created']);
    expect(about(log, both.token.id)).toEqual(['api_key.created']);
    // What never read Acme is not Acme's business.
    expect(about(log, globexOnly.token.id)).toEqual([]);
    expect(about(log, privateHook.endpoint.id)).toEqual([]);
    // Newest first across both sources, each event once.
    const times = log.map((e) => e.at);
    expect(times).toEqual([...times].sort().reverse());
    expect(new Set(log.map((e) => e.id)).size).toBe(log.length);
    // Globex's log has what reached Globex, and its own removal.
    const globexLog = (await bob.securityLog.organization({ organizationId: GLOBEX })).events;
    expect(about(globexLog, globexOnly.token.id)).toEqual(['api_key.created']);
    expect(about(globexLog, both.token.id)).toEqual(['api_key.access_removed', 'api_key.created']);

    // The CSV of the organisation's log has the same events; a member gets a 404 page.
    const csv = await serveSecurityLogDownload(new Request(`http://localhost/settings/organizations/${ACME}/security-log/export?kind=calendar_feed.created`), { ...ALICE, name: null }, organizationLog(ACME));
    expect(csv.status).toBe(200);
    expect(csv.headers.get('content-type')).toMatch(/^text\/csv/);
    expect(await csv.text()).toContain(feed.token.id);
    const refused = await serveSecurityLogDownload(new Request(`http://localhost/settings/organizations/${ACME}/security-log/export`), { ...BOB, name: null }, organizationLog(ACME));
    expect(refused.status).toBe(404);
    expect(await refused.text()).not.toContain(feed.token.id);
    expect((await serveSecurityLogDownload(new Request('http://localhost/settings/organizations/nope/security-log/export'), { ...BOB, name: null }, organizationLog('nope'))).status).toBe(404);
    expect(await (await serveSecurityLogDownload(new Request('http://localhost/settings/security-log/export'), { ...BOB, name: null }, ownLog)).text()).toContain(feed.token.id);

    // Policy off: what is written from now on no longer reaches Acme; what was written stays
    // (a member cannot erase the organisation's record by narrowing access or deleting).
    await alice.organizationKeys.setPolicy({ organizationId: ACME, memberKeysAllowed: false });
    const later = await bob.apiKeys.create({ name: 'bob after the policy', expiresInDays: 30 });
    await bob.webhooks.delete({ id: endpoint.id });
    const after = await acmeLog();
    expect(about(after, everything.token.id)).toEqual(['api_key.revoked', 'api_key.created']);
    expect(about(after, endpoint.id)).toEqual(['webhook_endpoint.created']);
    expect(about(after, later.token.id)).toEqual([]);
    await alice.organizationKeys.setPolicy({ organizationId: ACME, memberKeysAllowed: true });
  });

  it('does not show what a key did before its owner joined the organisation, nor after they left', async () => {
    const carol = as(CAROL);
    const key = await carol.apiKeys.create({ name: 'carol everything', expiresInDays: 30 });
    await handle.db.insert(memberships).values({ userId: CAROL.id, organizationId: ACME, role: 'member' });
    await carol.apiKeys.editRestrictions({ id: key.token.id, permissions: ['contracts:read'] });
    await handle.db.delete(memberships).where(and(eq(memberships.userId, CAROL.id), eq(memberships.organizationId, ACME)));
    await carol.apiKeys.revoke({ id: key.token.id });
    const log = (await as(ALICE).securityLog.organization({ organizationId: ACME })).events;
    expect(log.filter((e) => e.objectId === key.token.id).map((e) => e.kind)).toEqual(['api_key.edited']);
    // Her own log has all of it.
    expect((await carol.securityLog.own({})).events.filter((e) => e.objectId === key.token.id).map((e) => e.kind)).toEqual(['api_key.revoked', 'api_key.edited', 'api_key.created']);
  });

  it('shows an organisation key’s usage and requests to its admins only', async () => {
    const orgKey = await as(ALICE).apiKeys.create({ name: 'Acme reader', expiresInDays: 30, owner: { kind: 'organization', organizationId: ACME } });
    const res = await served(apiRequest('GET', '/contracts/00000000-0000-4000-8000-000000000000', { key: orgKey.secret }));
    expect(res.status).toBe(404);
    const requestId = res.headers.get('x-request-id')!;
    expect((await as(ALICE).keyActivity.usage({ keyId: orgKey.token.id })).hours.at(-1)!.read['4xx']).toBe(1);
    expect(await as(ALICE).keyActivity.findRequest({ requestId })).toMatchObject({ status: 404, keyName: 'Acme reader' });
    expect(await statusOf(as(BOB).keyActivity.usage({ keyId: orgKey.token.id }))).toBe(404);
    expect(await statusOf(as(BOB).keyActivity.findRequest({ requestId }))).toBe(404);
    expect(await statusOf(as(CAROL).keyActivity.requests({ keyId: orgKey.token.id }))).toBe(404);
  });
});
