import { and, eq } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '@/db/client';
import { contracts, memberships, organizations, users } from '@/db/schema';
import { clearVerifiedTokenCache } from '@/server/access/tokens';
import { setProcessDatabase } from '@/server/database';
import { createCallerFactory, createInnerContext } from '@/server/trpc/init';
import { internalRouter } from '@/server/trpc/root';
import { apiRequest, PROXY_CLIENT_ADDRESS, send, type Answer, type ErrorJson } from '../helpers/api';
import { applyConfig, configureForFile } from '../helpers/config';
import { createTestDatabase } from '../helpers/db';
import { expectAppError } from '../helpers/errors';

// Restricted keys (docs/keys.md) end to end: created through the app's procedures as the
// settings pages call them, used through the API's own router as a client would.
// Behind a proxy that sets X-Real-IP, so that the API knows each request's address.
configureForFile({ ...PROXY_CLIENT_ADDRESS, RATE_LIMIT_AUTH_FAILURES_PER_MINUTE: '30' });

let handle: DatabaseHandle;
beforeAll(async () => {
  handle = await createTestDatabase();
  setProcessDatabase(handle);
});
afterAll(async () => handle?.close());
afterEach(() => clearVerifiedTokenCache());

const createCaller = createCallerFactory(internalRouter);
const as = (user: { id: string; email: string }) => createCaller(createInnerContext({ db: handle.db, sessionUser: { ...user, name: null } }));

// A world of its own per test: bob is a member of Acme and the owner of Globex (the
// issue's example), alice owns Acme; each has contracts.
async function world() {
  const tag = crypto.randomUUID().slice(0, 8);
  const [alice, bob, carol] = await handle.db
    .insert(users)
    .values(['alice', 'bob', 'carol'].map((n) => ({ email: `${n}-${tag}@example.com` })))
    .returning({ id: users.id, email: users.email });
  const [acme, globex] = await handle.db
    .insert(organizations)
    .values([{ name: `Acme ${tag}` }, { name: `Globex ${tag}` }])
    .returning({ id: organizations.id });
  await handle.db.insert(memberships).values([
    { userId: alice!.id, organizationId: acme!.id, role: 'owner' },
    { userId: bob!.id, organizationId: acme!.id, role: 'member' },
    { userId: bob!.id, organizationId: globex!.id, role: 'owner' },
    { userId: carol!.id, organizationId: globex!.id, role: 'admin' },
  ]);
  const contract = async (ownerId: string, organizationId: string | null, title: string) => {
    const [row] = await handle.db
      .insert(contracts)
      .values({ ownerId, organizationId, title, fileName: `${title}.pdf`, fileSize: 1 })
      .returning({ id: contracts.id });
    return row!.id;
  };
  const ids = {
    bobPersonal: await contract(bob!.id, null, 'bob personal'),
    acme: await contract(alice!.id, acme!.id, 'acme contract'),
    // Carol's, so that it outlives bob in the test where bob is deleted.
    globex: await contract(carol!.id, globex!.id, 'globex contract'),
    alicePersonal: await contract(alice!.id, null, 'alice personal'),
  };
  return { alice: alice!, bob: bob!, carol: carol!, acme: acme!.id, globex: globex!.id, ids };
}

type ListJson = { data: { contracts: { id: string; organization_id: string | null }[]; pagination: { total: number } } };
const list = async (key: string, query = '', clientAddress?: string) => send(apiRequest('GET', `/contracts?limit=100${query}`, { key, clientAddress }));
const listedIds = (answer: Answer) => (answer.json as ListJson).data.contracts.map((c) => c.id).sort();
const get = (key: string, id: string) => send(apiRequest('GET', `/contracts/${id}`, { key }));
const exportCsv = (key: string, clientAddress?: string) =>
  send(apiRequest('POST', '/contracts/export', { key, clientAddress, body: '{}', headers: { 'content-type': 'application/json' } }));
const errorOf = (answer: Answer) => (answer.json as ErrorJson).error;

describe('access', () => {
  it('a key restricted to one organisation reads that organisation only: others are left out, 404 and 403 as for other people', async () => {
    const w = await world();
    const { secret } = await as(w.bob).apiKeys.create({ name: 'globex etl', access: { kind: 'chosen', personal: false, organizationIds: [w.globex] } });

    expect(listedIds(await list(secret))).toEqual([w.ids.globex]);
    expect((await get(secret, w.ids.globex)).status).toBe(200);
    expect((await get(secret, w.ids.acme)).status).toBe(404);
    expect((await get(secret, w.ids.bobPersonal)).status).toBe(404);
    const foreign = await list(secret, `&organization_id=${w.acme}`);
    expect(foreign.status).toBe(403);
    expect(errorOf(foreign).code).toBe('forbidden');
    const csv = await exportCsv(secret);
    expect(csv.status).toBe(200);
    expect(csv.text).toContain('globex contract');
    expect(csv.text).not.toContain('acme contract');
    expect(csv.text).not.toContain('bob personal');

    // An unrestricted key of the same person still reads everything they can see.
    const all = await as(w.bob).apiKeys.create({ name: 'all' });
    expect(listedIds(await list(all.secret))).toEqual([w.ids.bobPersonal, w.ids.acme, w.ids.globex].sort());
    expect(all.token.access).toEqual({ kind: 'all' });
  });

  it('personal only; and a restricted key loses an organisation with the membership', async () => {
    const w = await world();
    const personal = await as(w.bob).apiKeys.create({ name: 'personal', access: { kind: 'chosen', personal: true, organizationIds: [] } });
    expect(listedIds(await list(personal.secret))).toEqual([w.ids.bobPersonal]);
    expect((await get(personal.secret, w.ids.globex)).status).toBe(404);

    const acmeKey = await as(w.bob).apiKeys.create({ name: 'acme', access: { kind: 'chosen', personal: true, organizationIds: [w.acme] } });
    expect(listedIds(await list(acmeKey.secret))).toEqual([w.ids.bobPersonal, w.ids.acme].sort());
    await handle.db.delete(memberships).where(and(eq(memberships.userId, w.bob.id), eq(memberships.organizationId, w.acme)));
    expect(listedIds(await list(acmeKey.secret))).toEqual([w.ids.bobPersonal]);
  });

  it('refuses an access list naming an organisation the person is not in, and an empty choice; nothing is created', async () => {
    const w = await world();
    const before = (await as(w.alice).apiKeys.list()).length;
    await expectAppError(as(w.alice).apiKeys.create({ name: 'x', access: { kind: 'chosen', personal: false, organizationIds: [w.globex] } }), 'invalid_request', /not a member of the organisation/);
    await expectAppError(as(w.alice).apiKeys.create({ name: 'x', access: { kind: 'chosen', personal: false, organizationIds: [] } }), 'invalid_request', /Choose what it may read/);
    expect((await as(w.alice).apiKeys.list()).length).toBe(before);
  });
});

describe('permissions', () => {
  it('a read-only key gets 403 insufficient_scope on the export, with the RFC 6750 challenge, and no quota is spent', async () => {
    const w = await world();
    const { secret, token } = await as(w.bob).apiKeys.create({ name: 'read only', permissions: ['contracts:read'] });
    expect(token.restrictions).toMatch(/· read ·/);
    const refused = await exportCsv(secret);
    expect(refused.status).toBe(403);
    expect(errorOf(refused).code).toBe('insufficient_scope');
    expect(errorOf(refused).message).toContain('contracts:export');
    expect(refused.headers.get('www-authenticate')).toBe('Bearer error="insufficient_scope", scope="contracts:export"');
    expect(refused.headers.get('x-ratelimit-remaining')).toBeNull();
    const listed = await list(secret);
    expect(listed.status).toBe(200);
    expect(listed.headers.get('x-ratelimit-remaining')).toBe('59');

    // Given the permission, its first export is the first one counted.
    await as(w.bob).apiKeys.editRestrictions({ id: token.id, permissions: ['contracts:read', 'contracts:export'] });
    const exported = await exportCsv(secret);
    expect(exported.status).toBe(200);
    expect(exported.headers.get('x-ratelimit-remaining')).toBe('9');
  });

  it('an export-only key cannot list or get, and the refusals count nowhere', async () => {
    const w = await world();
    const { secret, token } = await as(w.bob).apiKeys.create({ name: 'export only', permissions: ['contracts:export'] });
    for (const answer of [await list(secret), await get(secret, w.ids.globex)]) {
      expect(answer.status).toBe(403);
      expect(errorOf(answer).code).toBe('insufficient_scope');
      expect(answer.headers.get('www-authenticate')).toBe('Bearer error="insufficient_scope", scope="contracts:read"');
    }
    expect((await exportCsv(secret)).status).toBe(200);
    await as(w.bob).apiKeys.editRestrictions({ id: token.id, permissions: ['contracts:read'] });
    expect((await list(secret)).headers.get('x-ratelimit-remaining')).toBe('59');
  });

  it('refuses an unknown permission and an empty list', async () => {
    const w = await world();
    await expectAppError(as(w.bob).apiKeys.create({ name: 'x', permissions: ['contracts:write'] }), 'invalid_request', /Unknown permission "contracts:write"/);
    await expectAppError(as(w.bob).apiKeys.create({ name: 'x', permissions: [] }), 'invalid_request', /at least one permission/);
    expect(await as(w.bob).apiKeys.list()).toEqual([]);
  });
});

describe('allowed addresses', () => {
  it('serves the allowed range, refuses another address with 403 ip_not_allowed naming it, spending none of the quota', async () => {
    const w = await world();
    const { secret } = await as(w.bob).apiKeys.create({ name: 'office', allowedAddresses: ['203.0.113.0/24', '2001:db8:aaaa::/48'] });
    const ok = await list(secret, '', '203.0.113.9');
    expect(ok.status).toBe(200);
    expect(ok.headers.get('x-ratelimit-remaining')).toBe('59');
    expect((await list(secret, '', '2001:db8:aaaa:1::7')).status).toBe(200);

    const refused = await list(secret, '', '198.51.100.7');
    expect(refused.status).toBe(403);
    expect(errorOf(refused).code).toBe('ip_not_allowed');
    expect(errorOf(refused).message).toContain('198.51.100.7');
    expect(refused.headers.get('x-ratelimit-remaining')).toBeNull();
    const csv = await exportCsv(secret, '2001:db8:bbbb::1');
    expect(csv.status).toBe(403);
    expect(errorOf(csv).message).toContain('2001:db8:bbbb::1');
    expect((await list(secret, '', '203.0.113.10')).headers.get('x-ratelimit-remaining')).toBe('57');
    expect((await exportCsv(secret, '203.0.113.10')).headers.get('x-ratelimit-remaining')).toBe('9');
  });

  it('counts a refused address as a failed attempt of that address: after 30, 429', async () => {
    const w = await world();
    const { secret } = await as(w.bob).apiKeys.create({ name: 'office', allowedAddresses: ['203.0.113.0/24'] });
    const stranger = '192.0.2.77';
    const answers = [];
    for (let i = 0; i < 31; i++) answers.push((await list(secret, '', stranger)).status);
    expect(answers.slice(0, 30).every((s) => s === 403)).toBe(true);
    expect(answers[30]).toBe(429);
    // The key itself still works from its own address.
    expect((await list(secret, '', '203.0.113.1')).status).toBe(200);
  });

  it('refuses malformed or too many addresses, and any list where the deployment cannot know the address', async () => {
    const w = await world();
    await expectAppError(as(w.bob).apiKeys.create({ name: 'x', allowedAddresses: ['203.0.113.0/33'] }), 'invalid_request', /"203.0.113.0\/33" is not an IPv4 or IPv6 address/);
    await expectAppError(as(w.bob).apiKeys.create({ name: 'x', allowedAddresses: ['example.com'] }), 'invalid_request', /not an IPv4 or IPv6/);
    const many = Array.from({ length: 21 }, (_, i) => `198.51.100.${i}`);
    await expectAppError(as(w.bob).apiKeys.create({ name: 'x', allowedAddresses: many }), 'invalid_request', /At most 20/);
    try {
      await applyConfig({ CLIENT_ADDRESS_HEADER: undefined, TRUSTED_PROXY_HOPS: undefined, VERCEL: undefined });
      await expectAppError(as(w.bob).apiKeys.create({ name: 'x', allowedAddresses: ['203.0.113.0/24'] }), 'invalid_request', /does not know the address/);
      // Without addresses the key is fine there.
      expect((await as(w.bob).apiKeys.create({ name: 'fine' })).secret).toMatch(/^cdapi_/);
    } finally {
      await applyConfig({ ...PROXY_CLIENT_ADDRESS });
    }
    expect((await as(w.bob).apiKeys.list()).map((k) => k.name)).toEqual(['fine']);
  });
});

describe('organisation keys', () => {
  it('an owner creates one; it reads the organisation only and keeps working when its creator leaves and is deleted', async () => {
    const w = await world();
    const { secret, token } = await as(w.bob).apiKeys.create({ name: 'globex etl', owner: { kind: 'organization', organizationId: w.globex }, permissions: ['contracts:read'] });
    expect(token.owner).toMatchObject({ kind: 'organization', organizationId: w.globex });
    expect(listedIds(await list(secret))).toEqual([w.ids.globex]);
    // Not in bob's own list; in the organisation's, with its creator, for carol (admin).
    expect((await as(w.bob).apiKeys.list()).map((k) => k.id)).not.toContain(token.id);
    const seen = await as(w.carol).organizationKeys.list({ organizationId: w.globex });
    expect(seen.organizationKeys.map((k) => [k.id, k.createdByEmail])).toEqual([[token.id, w.bob.email]]);

    await handle.db.delete(memberships).where(and(eq(memberships.userId, w.bob.id), eq(memberships.organizationId, w.globex)));
    expect(listedIds(await list(secret))).toEqual([w.ids.globex]);
    await handle.db.delete(users).where(eq(users.id, w.bob.id));
    clearVerifiedTokenCache();
    expect(listedIds(await list(secret))).toEqual([w.ids.globex]);
    const after = await as(w.carol).organizationKeys.list({ organizationId: w.globex });
    expect(after.organizationKeys.map((k) => [k.id, k.createdByEmail, k.status])).toEqual([[token.id, null, 'active']]);

    // Its owners and admins roll, edit and revoke it.
    await as(w.carol).apiKeys.editRestrictions({ id: token.id, permissions: ['contracts:export'] });
    expect((await list(secret)).status).toBe(403);
    const rolled = await as(w.carol).apiKeys.roll({ id: token.id, graceHours: 0 });
    expect((await exportCsv(rolled.secret)).status).toBe(200);
    await as(w.carol).apiKeys.revoke({ id: token.id });
    expect((await exportCsv(rolled.secret)).status).toBe(401);
  });

  it('members see nothing of it and cannot create one', async () => {
    const w = await world();
    const { token } = await as(w.alice).apiKeys.create({ name: 'acme key', owner: { kind: 'organization', organizationId: w.acme } });
    await expectAppError(as(w.bob).apiKeys.create({ name: 'x', owner: { kind: 'organization', organizationId: w.acme } }), 'forbidden', /owners and admins/);
    await expectAppError(as(w.bob).organizationKeys.list({ organizationId: w.acme }), 'forbidden');
    await expectAppError(as(w.bob).apiKeys.revoke({ id: token.id }), 'not_found');
    await expectAppError(as(w.bob).apiKeys.roll({ id: token.id, graceHours: 0 }), 'not_found');
    await expectAppError(as(w.bob).apiKeys.editRestrictions({ id: token.id, permissions: ['contracts:read'] }), 'not_found');
    expect(await as(w.bob).apiKeys.list()).toEqual([]);
    // Not an admin of Globex's neighbour either: carol cannot make an Acme key.
    await expectAppError(as(w.carol).apiKeys.create({ name: 'x', owner: { kind: 'organization', organizationId: w.acme } }), 'forbidden');
  });
});

describe('oversight by the organisation', () => {
  it("lists members' keys that read it; remove access takes one organisation from one key, and its owner sees why", async () => {
    const w = await world();
    const all = await as(w.bob).apiKeys.create({ name: 'bob all' });
    const globexOnly = await as(w.bob).apiKeys.create({ name: 'bob globex', access: { kind: 'chosen', personal: false, organizationIds: [w.globex] } });
    const acmeKeys = await as(w.alice).organizationKeys.list({ organizationId: w.acme });
    expect(acmeKeys.memberKeys.map((k) => [k.name, k.ownerEmail])).toEqual(expect.arrayContaining([['bob all', w.bob.email]]));
    expect(acmeKeys.memberKeys.map((k) => k.id)).not.toContain(globexOnly.token.id);

    expect(listedIds(await list(all.secret))).toContain(w.ids.acme);
    await as(w.alice).organizationKeys.removeAccess({ organizationId: w.acme, id: all.token.id });
    expect(listedIds(await list(all.secret))).toEqual([w.ids.bobPersonal, w.ids.globex].sort());
    expect((await get(all.secret, w.ids.acme)).status).toBe(404);
    expect((await as(w.alice).organizationKeys.list({ organizationId: w.acme })).memberKeys).toEqual([]);
    const mine = (await as(w.bob).apiKeys.list()).find((k) => k.id === all.token.id)!;
    expect(mine.removedFrom).toEqual([expect.objectContaining({ organizationId: w.acme, removedBy: w.alice.email })]);
    expect(mine.restrictions).toContain('removed by Acme');

    // Only the organisation's owners and admins, and only members' keys.
    await expectAppError(as(w.bob).organizationKeys.removeAccess({ organizationId: w.acme, id: all.token.id }), 'forbidden');
    const aliceKey = await as(w.alice).apiKeys.create({ name: 'alice' });
    await expectAppError(as(w.bob).organizationKeys.removeAccess({ organizationId: w.globex, id: aliceKey.token.id }), 'not_found');
  });

  it("policy off: members' personal keys leave the organisation out; its own keys still read it", async () => {
    const w = await world();
    expect(await as(w.alice).organizationKeys.policy({ organizationId: w.acme })).toEqual({ memberKeysAllowed: true });
    const bobKey = await as(w.bob).apiKeys.create({ name: 'bob all' });
    const orgKey = await as(w.alice).apiKeys.create({ name: 'acme own', owner: { kind: 'organization', organizationId: w.acme } });
    expect(listedIds(await list(bobKey.secret))).toContain(w.ids.acme);

    await expectAppError(as(w.bob).organizationKeys.setPolicy({ organizationId: w.acme, memberKeysAllowed: false }), 'forbidden');
    await as(w.alice).organizationKeys.setPolicy({ organizationId: w.acme, memberKeysAllowed: false });
    expect(listedIds(await list(bobKey.secret))).toEqual([w.ids.bobPersonal, w.ids.globex].sort());
    expect(listedIds(await list(orgKey.secret))).toEqual([w.ids.acme]);
    const overview = await as(w.alice).organizationKeys.list({ organizationId: w.acme });
    expect(overview.organization.memberKeysAllowed).toBe(false);
    expect(overview.memberKeys).toEqual([]);
    expect(overview.organizationKeys.map((k) => k.id)).toEqual([orgKey.token.id]);

    await as(w.alice).organizationKeys.setPolicy({ organizationId: w.acme, memberKeysAllowed: true });
    expect(listedIds(await list(bobKey.secret))).toContain(w.ids.acme);
  });
});

describe('calendar feeds', () => {
  it("take the access choice, and leave out an organisation whose policy is off", async () => {
    const w = await world();
    const inAMonth = new Date(Date.now() + 30 * 86_400_000).toISOString().slice(0, 10);
    const dated = async (ownerId: string, organizationId: string | null, title: string) =>
      handle.db.insert(contracts).values({ ownerId, organizationId, title, fileName: 'x.pdf', fileSize: 1, status: 'completed', expirationDate: inAMonth });
    await dated(w.bob.id, null, 'Bob dated personal');
    await dated(w.alice.id, w.acme, 'Acme dated');
    await dated(w.carol.id, w.globex, 'Globex dated');
    const feed = async (token: string) => (await send(new Request(`http://localhost:3000/api/v1/calendar/${token}.ics`, { headers: { 'X-Real-IP': '203.0.113.50' } }))).text;

    const all = await as(w.bob).calendarFeeds.create({ name: 'everything' });
    const globexOnly = await as(w.bob).calendarFeeds.create({ name: 'globex', access: { kind: 'chosen', personal: false, organizationIds: [w.globex] } });
    const everything = await feed(all.secret);
    for (const title of ['Bob dated personal', 'Acme dated', 'Globex dated']) expect(everything).toContain(title);
    const narrowed = await feed(globexOnly.secret);
    expect(narrowed).toContain('Globex dated');
    expect(narrowed).not.toContain('Acme dated');
    expect(narrowed).not.toContain('Bob dated personal');

    await as(w.alice).organizationKeys.setPolicy({ organizationId: w.acme, memberKeysAllowed: false });
    const withoutAcme = await feed(all.secret);
    expect(withoutAcme).not.toContain('Acme dated');
    expect(withoutAcme).toContain('Globex dated');

    // Changed later: the feed follows.
    await as(w.bob).calendarFeeds.setAccess({ id: all.token.id, access: { kind: 'chosen', personal: true, organizationIds: [] } });
    const personalOnly = await feed(all.secret);
    expect(personalOnly).toContain('Bob dated personal');
    expect(personalOnly).not.toContain('Globex dated');
  });
});

describe('rolling', () => {
  it('a new secret for the same key and buckets; the old one works through its grace, then 401', async () => {
    const w = await world();
    const { secret: old, token } = await as(w.bob).apiKeys.create({ name: 'etl', permissions: ['contracts:read'] });
    expect((await list(old)).headers.get('x-ratelimit-remaining')).toBe('59');
    const rolled = await as(w.bob).apiKeys.roll({ id: token.id, graceHours: 1 });
    expect(rolled.token.id).toBe(token.id);
    expect(rolled.secret).not.toBe(old);
    // Same bucket: the count goes on.
    expect((await list(rolled.secret)).headers.get('x-ratelimit-remaining')).toBe('58');
    expect((await list(old)).headers.get('x-ratelimit-remaining')).toBe('57');
    // Same restrictions.
    expect((await exportCsv(rolled.secret)).status).toBe(403);
    const listed = (await as(w.bob).apiKeys.list()).find((k) => k.id === token.id)!;
    expect(listed.previousExpiresAt!.getTime()).toBeGreaterThan(Date.now() + 59 * 60_000);

    // A second roll without grace: both earlier secrets stop at once, here and (markers) elsewhere.
    const again = await as(w.bob).apiKeys.roll({ id: token.id, graceHours: 0 });
    expect((await list(old)).status).toBe(401);
    expect((await list(rolled.secret)).status).toBe(401);
    expect((await list(again.secret)).status).toBe(200);
  });

  it('the old secret stops at the end of its grace, although it is in the cache', async () => {
    const w = await world();
    const { secret: old, token } = await as(w.bob).apiKeys.create({ name: 'etl' });
    const { rollApiKey } = await import('@/server/access/tokens');
    // Rolled "an hour ago, minus two seconds" with one hour of grace: two seconds left.
    await rollApiKey(handle.db, token.id, 1, new Date(Date.now() - 3_600_000 + 2_000));
    expect((await list(old)).status).toBe(200);
    await new Promise((r) => setTimeout(r, 2_100));
    expect((await list(old)).status).toBe(401);
  });

  it('refuses a grace outside the choices, and a revoked or expired key', async () => {
    const w = await world();
    const { token } = await as(w.bob).apiKeys.create({ name: 'etl' });
    await expectAppError(as(w.bob).apiKeys.roll({ id: token.id, graceHours: 169 as 168 }), 'invalid_request');
    const { rollApiKey } = await import('@/server/access/tokens');
    await expectAppError(rollApiKey(handle.db, token.id, -1), 'invalid_request', /0 to 168/);
    await expectAppError(rollApiKey(handle.db, token.id, 169), 'invalid_request', /0 to 168/);
    const expiring = await as(w.bob).apiKeys.create({ name: 'soon', expiresInDays: 7 });
    await expectAppError(rollApiKey(handle.db, expiring.token.id, 0, new Date(Date.now() + 8 * 86_400_000)), 'conflict', /revoked or expired/);
    await as(w.bob).apiKeys.revoke({ id: token.id });
    await expectAppError(as(w.bob).apiKeys.roll({ id: token.id, graceHours: 0 }), 'conflict', /revoked or expired/);
  });
});
