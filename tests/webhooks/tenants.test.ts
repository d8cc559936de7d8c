import { and, eq, isNull } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '@/db/client';
import { fanOutEvents } from '@/db/queries/webhooks';
import { contracts, memberships, organizations } from '@/db/schema';
import { DEMO_ORGS, DEMO_USERS, seedDemo } from '@/db/seed/demo';
import { deliveryLog, setEndpointAccess } from '@/server/webhooks/endpoints';
import { configureForFile } from '../helpers/config';
import { createTestDatabase } from '../helpers/db';
import { clearWebhooks, receiverEndpoint, startReceiver, testWorker, verify, WEBHOOK_TEST_ENV, type Receiver } from './support';

/**
 * The API's tenant rules hold for webhooks: an endpoint hears only of contracts its owner
 * can see when the delivery is made (personal ones, and their organisations' at that
 * moment), so a membership removed between the change and the delivery stops it.
 */

configureForFile(WEBHOOK_TEST_ENV);

let handle: DatabaseHandle;
const receivers: Partial<Record<'alice' | 'bob' | 'carol', Receiver>> = {};
const { alice, bob, carol } = DEMO_USERS;

beforeAll(async () => {
  handle = await createTestDatabase();
  await seedDemo(handle.db);
});
afterAll(() => handle?.close());
beforeEach(async () => {
  for (const user of ['alice', 'bob', 'carol'] as const) {
    receivers[user] = await startReceiver();
    await receiverEndpoint(handle.db, DEMO_USERS[user].id, receivers[user]!);
  }
});
afterEach(async () => {
  for (const r of Object.values(receivers)) await r?.close();
  await clearWebhooks(handle.db);
  // Bob is back in Acme for the next test.
  await handle.db.insert(memberships).values({ userId: bob.id, organizationId: DEMO_ORGS.acme.id, role: 'member' }).onConflictDoNothing();
});

const oneOf = async (where: ReturnType<typeof and>) => (await handle.db.select({ id: contracts.id }).from(contracts).where(where).limit(1))[0]!.id;
const titlesAt = (user: 'alice' | 'bob' | 'carol') => receivers[user]!.received.map((r) => (JSON.parse(r.body) as { data: { contract: { title?: string; id: string } } }).data.contract);

describe('who hears of what', () => {
  it("a personal contract reaches its owner only; an organisation's reaches its members only", async () => {
    const personal = await oneOf(and(eq(contracts.ownerId, alice.id), eq(contracts.status, 'completed'))!);
    const acme = await oneOf(eq(contracts.organizationId, DEMO_ORGS.acme.id));
    const globex = await oneOf(eq(contracts.organizationId, DEMO_ORGS.globex.id));
    await handle.query(`UPDATE contracts SET title = 'alice personal' WHERE id = $1`, [personal]);
    await handle.query(`UPDATE contracts SET title = 'acme' WHERE id = $1`, [acme]);
    await handle.query(`UPDATE contracts SET title = 'globex' WHERE id = $1`, [globex]);
    await handle.query(`DELETE FROM contracts WHERE id = $1`, [globex]);
    await testWorker(handle.db).runOnce();
    expect(titlesAt('alice').map((c) => c.title).sort()).toEqual(['acme', 'alice personal']);
    expect(titlesAt('bob').map((c) => c.title ?? `deleted ${c.id === globex}`).sort()).toEqual(['acme', 'deleted true', 'globex']);
    expect(titlesAt('carol')).toEqual([]);
  });

  it('a membership removed after the change and before the delivery stops it at once', async () => {
    const acme = await oneOf(eq(contracts.organizationId, DEMO_ORGS.acme.id));
    await handle.query(`UPDATE contracts SET title = 'after bob left' WHERE id = $1`, [acme]);
    // Fanned out while Bob was a member: he has a delivery queued.
    await fanOutEvents(handle.db, new Date(), 100);
    await handle.db.delete(memberships).where(and(eq(memberships.userId, bob.id), eq(memberships.organizationId, DEMO_ORGS.acme.id)));
    await testWorker(handle.db).runOnce();
    expect(receivers.bob!.received).toHaveLength(0);
    expect(titlesAt('alice').map((c) => c.title)).toEqual(['after bob left']);
    const bobsEndpoint = (await handle.query<{ id: string }>(`SELECT id FROM webhook_endpoints WHERE user_id = $1`, [bob.id]))[0]!.id;
    const [skipped] = await deliveryLog(handle.db, bob.id, bobsEndpoint);
    expect(skipped).toMatchObject({ state: 'skipped', attempts: 0, lastError: 'Not sent: you can no longer see this contract.' });
  });

  it('a contract moved into an organisation reaches its new members; the former owner alone hears that it left', async () => {
    const personal = await oneOf(and(eq(contracts.ownerId, carol.id), eq(contracts.status, 'completed'))!);
    await handle.query(`UPDATE contracts SET organization_id = $1 WHERE id = $2`, [DEMO_ORGS.globex.id, personal]);
    await testWorker(handle.db).runOnce();
    // Carol is not in Globex: for her it is gone (a contract.deleted of her personal contract); Bob (Globex's owner) sees the update.
    const carolSecret = await secretOf(carol.id);
    expect(receivers.carol!.received.map((r) => verify(carolSecret, r))).toEqual([
      expect.objectContaining({ type: 'contract.deleted', data: { contract: { id: personal, organization_id: null } } }),
    ]);
    const [moved] = receivers.bob!.received;
    expect(verify(String(await secretOf(bob.id)), moved!).data.changed_fields).toEqual(['organization_id']);
  });
});

/** The endpoint secret of a user, as the worker reads it (decrypted). */
describe('the access choice and the organisation policy (docs/keys.md)', () => {
  afterEach(async () => {
    await handle.db.update(organizations).set({ memberKeysAllowed: true });
  });

  it('an endpoint restricted to personal contracts hears nothing of its organisations; a queued delivery is skipped', async () => {
    const bobsEndpoint = (await handle.query<{ id: string }>(`SELECT id FROM webhook_endpoints WHERE user_id = $1`, [bob.id]))[0]!.id;
    const acme = await oneOf(eq(contracts.organizationId, DEMO_ORGS.acme.id));
    const personal = await oneOf(and(eq(contracts.ownerId, bob.id), isNull(contracts.organizationId))!);
    await handle.query(`UPDATE contracts SET title = 'acme queued' WHERE id = $1`, [acme]);
    // Queued while the endpoint heard of everything, then restricted before the delivery.
    await fanOutEvents(handle.db, new Date(), 100);
    await setEndpointAccess(handle.db, bob.id, bobsEndpoint, { kind: 'chosen', personal: true, organizationIds: [] });
    await handle.query(`UPDATE contracts SET title = 'acme later' WHERE id = $1`, [acme]);
    await handle.query(`UPDATE contracts SET title = 'bob personal' WHERE id = $1`, [personal]);
    await testWorker(handle.db).runOnce();
    expect(titlesAt('bob').map((c) => c.title)).toEqual(['bob personal']);
    expect(titlesAt('alice').map((c) => c.title)).toEqual(['acme queued', 'acme later']);
    // An organisation the owner is not in cannot be chosen.
    await expect(setEndpointAccess(handle.db, alice.id, (await handle.query<{ id: string }>(`SELECT id FROM webhook_endpoints WHERE user_id = $1`, [alice.id]))[0]!.id, { kind: 'chosen', personal: false, organizationIds: [DEMO_ORGS.globex.id] })).rejects.toThrow(/not a member/);
  });

  it("with the policy off, members' endpoints leave the organisation's contracts out", async () => {
    await handle.db.update(organizations).set({ memberKeysAllowed: false }).where(eq(organizations.id, DEMO_ORGS.acme.id));
    const acme = await oneOf(eq(contracts.organizationId, DEMO_ORGS.acme.id));
    const globex = await oneOf(eq(contracts.organizationId, DEMO_ORGS.globex.id));
    await handle.query(`UPDATE contracts SET title = 'acme hidden' WHERE id = $1`, [acme]);
    await handle.query(`UPDATE contracts SET title = 'globex seen' WHERE id = $1`, [globex]);
    await testWorker(handle.db).runOnce();
    expect(titlesAt('alice')).toEqual([]);
    expect(titlesAt('bob').map((c) => c.title)).toEqual(['globex seen']);
  });
});

async function secretOf(userId: string): Promise<string> {
  const { webhookSecretBox } = await import('@/server/access/secret-box');
  const [row] = await handle.query<{ id: string; secret_ciphertext: string }>(`SELECT id, secret_ciphertext FROM webhook_endpoints WHERE user_id = $1`, [userId]);
  return webhookSecretBox().open(row!.secret_ciphertext, row!.id);
}
