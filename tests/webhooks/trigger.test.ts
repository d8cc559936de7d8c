import { asc, eq } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '@/db/client';
import { detailColumns, type ContractDetailRow } from '@/db/queries/contracts/columns';
import { contracts, webhookEvents } from '@/db/schema';
import { DEMO_ORGS, DEMO_USERS, seedDemo } from '@/db/seed/demo';
import { toDetail } from '@/server/contracts/shape';
import { payloadOf } from '@/server/webhooks/message';
import { configureForFile } from '../helpers/config';
import { createTestDatabase } from '../helpers/db';
import { clearWebhooks, PRIVATE_OK, WEBHOOK_TEST_ENV } from './support';
import { createEndpoint } from '@/server/webhooks/endpoints';

/**
 * The outbox trigger on contracts (migration 0004): which writes become which events, with
 * which changed fields, written in the writer's transaction. The changed fields are held
 * against the API's shape: for each column, the paths of toDetail()'s output that differ.
 */

configureForFile(WEBHOOK_TEST_ENV);

let handle: DatabaseHandle;
const ALICE = DEMO_USERS.alice.id;

beforeAll(async () => {
  handle = await createTestDatabase();
  await seedDemo(handle.db);
});
afterAll(() => handle?.close());
afterEach(() => clearWebhooks(handle.db));

/** An endpoint from now on; the events written before it (every change is one, for the event list) are set aside. */
const listen = async () => {
  await handle.db.delete(webhookEvents);
  return createEndpoint(handle.db, ALICE, { url: 'http://127.0.0.1:9/hooks' }, { policy: PRIVATE_OK });
};
const events = () => handle.db.select().from(webhookEvents).orderBy(asc(webhookEvents.seq));

async function newContract(values: Partial<typeof contracts.$inferInsert> = {}) {
  const [row] = await handle.db
    .insert(contracts)
    .values({ ownerId: ALICE, title: 'Trigger test', fileName: 't.pdf', fileSize: 10, ...values })
    .returning({ id: contracts.id });
  return row!.id;
}

describe('the outbox trigger', () => {
  it('writes every change while no endpoint exists too (the event list keeps them), each given a position at commit', async () => {
    await handle.db.delete(webhookEvents); // the demo seed's
    const id = await newContract();
    await handle.query(`UPDATE contracts SET title = 'x' WHERE id = $1`, [id]);
    await handle.query(`DELETE FROM contracts WHERE id = $1`, [id]);
    const written = await events();
    expect(written.map((e) => e.type)).toEqual(['contract.created', 'contract.updated', 'contract.deleted']);
    const positions = written.map((e) => e.position!);
    expect(positions.every((p) => Number.isInteger(p))).toBe(true);
    expect([...positions].sort((a, b) => a - b)).toEqual(positions);
    expect(await handle.query(`SELECT * FROM event_list_commits`)).toEqual([]);
  });

  it('insert: created, plus extraction_completed when inserted completed; in one statement, in order', async () => {
    await listen();
    await handle.query(
      `INSERT INTO contracts (owner_id, title, file_name, file_size, status) VALUES ($1, 'pending one', 'a.pdf', 1, 'pending'), ($1, 'done one', 'b.pdf', 2, 'completed')`,
      [ALICE],
    );
    const written = await events();
    expect(written.map((e) => [e.type, (e.contract as { title: string }).title]).sort()).toEqual([
      ['contract.created', 'done one'],
      ['contract.created', 'pending one'],
      ['contract.extraction_completed', 'done one'],
    ]);
    const done = written.filter((e) => (e.contract as { title: string }).title === 'done one');
    expect(done.map((e) => e.type)).toEqual(['contract.created', 'contract.extraction_completed']);
    expect(written.every((e) => e.ownerId === ALICE && e.organizationId === null && e.fannedOutAt === null)).toBe(true);
  });

  it('update: the changed fields by the payload names; completion also fires extraction_completed; invisible changes fire nothing', async () => {
    const id = await newContract({ status: 'processing', provider: 'Before' });
    await listen();
    // updated_at alone, and extracted data of a contract that is not completed: the API shows no change.
    await handle.query(`UPDATE contracts SET updated_at = now() + interval '1 minute' WHERE id = $1`, [id]);
    await handle.query(`UPDATE contracts SET provider = 'Still hidden' WHERE id = $1`, [id]);
    expect(await events()).toHaveLength(0);

    await handle.query(`UPDATE contracts SET status = 'completed', renewal_date = '2027-05-01' WHERE id = $1`, [id]);
    const written = await events();
    expect(written.map((e) => e.type)).toEqual(['contract.updated', 'contract.extraction_completed']);
    expect(written[0]!.extra).toEqual({ changed_fields: ['status', 'data'] });
    // Both carry the contract as it is now, in the get-one shape, data included.
    const body = JSON.parse(payloadOf({ id: written[1]!.id, type: written[1]!.type, occurredAt: written[1]!.occurredAt, contract: written[1]!.contract as never, extra: null }));
    expect(body.data.contract).toMatchObject({ id, status: 'completed', data: { renewal_date: '2027-05-01', parties: { provider: 'Still hidden', client: null } } });
  });

  it('delete: id and organization_id only; a rolled-back write leaves no event', async () => {
    const id = await newContract({ organizationId: DEMO_ORGS.acme.id });
    await listen();
    await handle.db
      .transaction(async (tx) => {
        await tx.update(contracts).set({ title: 'never committed' }).where(eq(contracts.id, id));
        throw new Error('rollback');
      })
      .catch(() => {});
    expect(await events()).toHaveLength(0);
    await handle.query(`DELETE FROM contracts WHERE id = $1`, [id]);
    const [deleted] = await events();
    expect(deleted).toMatchObject({ type: 'contract.deleted', contractId: id, ownerId: ALICE, organizationId: DEMO_ORGS.acme.id });
    const body = JSON.parse(payloadOf({ id: deleted!.id, type: deleted!.type, occurredAt: deleted!.occurredAt, contract: deleted!.contract as never, extra: null }));
    expect(body.data).toEqual({ contract: { id, organization_id: DEMO_ORGS.acme.id } });
  });

  it('a contract that leaves a scope (another organisation, another owner) is deleted there, before its update in the new one', async () => {
    const id = await newContract({ organizationId: null });
    await listen();
    await handle.query(`UPDATE contracts SET organization_id = $2 WHERE id = $1`, [id, DEMO_ORGS.acme.id]);
    await handle.query(`UPDATE contracts SET owner_id = $2 WHERE id = $1`, [id, DEMO_USERS.bob.id]);
    await handle.query(`UPDATE contracts SET organization_id = NULL WHERE id = $1`, [id]);
    await handle.query(`UPDATE contracts SET owner_id = $2 WHERE id = $1`, [id, ALICE]);
    const written = (await events()).map((e) => [e.type, e.ownerId, e.organizationId, e.type === 'contract.deleted' ? e.contract : (e.extra as { changed_fields: string[] }).changed_fields]);
    expect(written).toEqual([
      ['contract.deleted', ALICE, null, { id, organization_id: null }],
      ['contract.updated', ALICE, DEMO_ORGS.acme.id, ['organization_id']],
      // (An organisation's contract changing owner leaves no scope and changes no field the API shows: nothing.)
      ['contract.deleted', DEMO_USERS.bob.id, DEMO_ORGS.acme.id, { id, organization_id: DEMO_ORGS.acme.id }],
      ['contract.updated', DEMO_USERS.bob.id, null, ['organization_id']],
      // A personal contract given to another owner: gone for the old one, new for the other.
      ['contract.deleted', DEMO_USERS.bob.id, null, { id, organization_id: null }],
      ['contract.updated', ALICE, null, []],
    ]);
  });

  // A new value of each column the API shows (id and updated_at aside).
  const CHANGES: Partial<Record<keyof ContractDetailRow, { sql: string; value: unknown }>> = {
    title: { sql: `'Another title'`, value: 'Another title' },
    fileName: { sql: `'other.pdf'`, value: 'other.pdf' },
    fileSize: { sql: '4242', value: 4242 },
    createdAt: { sql: `'2020-01-02T03:04:05.006Z'`, value: new Date('2020-01-02T03:04:05.006Z') },
    organizationId: { sql: `'${DEMO_ORGS.acme.id}'`, value: DEMO_ORGS.acme.id },
    expirationDate: { sql: `'2031-01-31'`, value: '2031-01-31' },
    renewalDate: { sql: `'2030-12-01'`, value: '2030-12-01' },
    autoRenewal: { sql: 'NOT coalesce(auto_renewal, false)', value: null },
    noticePeriod: { sql: `'P90D'`, value: 'P90D' },
    renewalTerm: { sql: `'P1Y'`, value: 'P1Y' },
    contractValue: { sql: '123.45', value: 123.45 },
    currency: { sql: `'CHF'`, value: 'CHF' },
    provider: { sql: `'New provider'`, value: 'New provider' },
    client: { sql: `'New client'`, value: 'New client' },
    summary: { sql: `'New summary'`, value: 'New summary' },
    confidenceScore: { sql: '0.5', value: 0.5 },
  };

  /** The paths of the payload where two values differ (objects compared leaf by leaf). */
  function differingPaths(a: unknown, b: unknown, prefix = ''): string[] {
    if (a && b && typeof a === 'object' && typeof b === 'object') {
      return Object.keys(a).flatMap((key) => differingPaths((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key], prefix ? `${prefix}.${key}` : key));
    }
    return JSON.stringify(a) === JSON.stringify(b) ? [] : [prefix];
  }

  it('names exactly the fields of the get-one shape that changed, for every column the API shows', async () => {
    const shown = Object.keys(detailColumns).filter((key) => !['id', 'updatedAt', 'status'].includes(key));
    expect(Object.keys(CHANGES).sort()).toEqual(shown.sort());
    for (const [column, change] of Object.entries(CHANGES)) {
      const id = await newContract({ status: 'completed', autoRenewal: true, currency: 'EUR', contractValue: 10, confidenceScore: 0.9 });
      await listen();
      const [before] = await handle.db.select(detailColumns).from(contracts).where(eq(contracts.id, id));
      const dbColumn = detailColumns[column as keyof typeof detailColumns].name;
      await handle.query(`UPDATE contracts SET "${dbColumn}" = ${change.sql} WHERE id = $1`, [id]);
      const [after] = await handle.db.select(detailColumns).from(contracts).where(eq(contracts.id, id));
      // The stored fields only: the computed renewal dates (which follow renewal_date) are not named.
      const computed = ['updated_at', 'data.next_renewal_date', 'data.notice_deadline'];
      const expected = differingPaths(toDetail(before!), toDetail(after!)).filter((path) => !computed.includes(path));
      const event = (await events()).find((e) => e.type === 'contract.updated');
      expect(event?.extra, column).toEqual({ changed_fields: expected });
      expect(expected.length, column).toBe(1);
      await clearWebhooks(handle.db);
    }
  });
});
