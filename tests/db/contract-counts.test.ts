import fc from 'fast-check';
import { eq, inArray, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '@/db/client';
import { contractCountStatement, countContracts, countContractsBounded } from '@/db/queries/contracts/count';
import { matchesNothing, type ContractFilters } from '@/db/queries/contracts/filters';
import { selectContractPage } from '@/db/queries/contracts/page';
import { contracts, type NewContract } from '@/db/schema';
import { CONTRACT_STATUSES } from '@/lib/contracts';
import { createTestDatabase } from '../helpers/db';
import { twoMembers } from '../helpers/two-members';

/**
 * The list's totals come from counters that statement triggers keep (migration 0007), not
 * from counting rows: after any mix of inserts, updates (status, organisation, owner,
 * auto_renewal, dates), deletes, a rolled-back write and a TRUNCATE, every total a
 * counter answers equals the number of rows the list itself returns for those filters.
 */

let handle: DatabaseHandle;
const { USERS, ORGS, scopes: allScopes, insert: insertMembers } = twoMembers('c', 'counter');
const scopes = allScopes.slice(0, 2);

beforeAll(async () => {
  handle = await createTestDatabase();
  await insertMembers(handle.db);
});
afterAll(async () => handle?.close());

const DAYS = ['2027-01-01', '2027-01-15', '2027-02-01', '2027-03-01'];
const FILTERS: ContractFilters[] = [
  {},
  ...CONTRACT_STATUSES.map((status) => ({ status })),
  { organizationId: ORGS[1] },
  { organizationId: ORGS[1], status: 'completed' },
  { autoRenewal: true },
  { autoRenewal: false, organizationId: ORGS[1] },
  { expirationFrom: '2027-01-01', expirationTo: '2027-01-31' },
  { expirationFrom: '2027-01-15' },
  { expirationTo: '2027-02-01', autoRenewal: true },
  { renewalFrom: '2027-01-10', renewalTo: '2027-02-20', status: 'completed' },
  { renewalFrom: '2027-01-01', status: 'pending' },
  { renewalTo: '2027-03-01', organizationId: ORGS[1] },
];

/** Every total a counter answers, against the rows the list returns. */
async function expectCountersMatchRows() {
  for (const scope of scopes) {
    for (const filters of FILTERS) {
      if (filters.organizationId && !scope.organizationIds.includes(filters.organizationId)) continue;
      // A contradiction (a status but completed with a date filter) needs no statement at all.
      const statement = contractCountStatement(scope, filters);
      if (statement) expect(statement.name).toMatch(/^contracts\.count (counters|date-counters) /);
      else expect(matchesNothing(filters), JSON.stringify(filters)).toBe(true);
      const rows = await selectContractPage(handle.db, scope, filters, { limit: 1000 });
      expect(await countContracts(handle.db, scope, filters), JSON.stringify({ scope: scope.userId, filters })).toBe(rows.length);
    }
  }
}

const contractArb = fc.record({
  owner: fc.constantFrom(0, 1),
  org: fc.constantFrom(null, 0, 1),
  status: fc.constantFrom(...CONTRACT_STATUSES),
  autoRenewal: fc.constantFrom(null, true, false),
  expiration: fc.option(fc.constantFrom(...DAYS), { nil: null }),
  renewal: fc.option(fc.constantFrom(...DAYS), { nil: null }),
});
type Generated = typeof contractArb extends fc.Arbitrary<infer T> ? T : never;
let serial = 0;
const toRow = (c: Generated): NewContract => ({
  id: `00000000-0000-4000-8000-${String(++serial).padStart(12, '0')}`,
  ownerId: USERS[c.owner]!,
  organizationId: c.org === null ? null : ORGS[c.org]!,
  title: 'Counted',
  status: c.status,
  fileName: 'c.pdf',
  fileSize: 1,
  autoRenewal: c.autoRenewal,
  expirationDate: c.expiration,
  renewalDate: c.renewal,
});

describe('contract counters', () => {
  it('equal the rows after any inserts, updates and deletes', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(contractArb, { minLength: 1, maxLength: 20 }),
        fc.array(fc.tuple(fc.nat(), contractArb), { maxLength: 8 }),
        fc.array(fc.nat(), { maxLength: 4 }),
        async (initial, updates, deletions) => {
          await handle.db.delete(contracts).where(inArray(contracts.ownerId, USERS));
          const rows = initial.map(toRow);
          // One statement for all rows (the triggers group them), then row by row.
          await handle.db.insert(contracts).values(rows);
          for (const [pick, change] of updates) {
            const row = rows[pick % rows.length]!;
            const { id: _id, ...values } = toRow(change);
            await handle.db.update(contracts).set(values).where(eq(contracts.id, row.id!));
          }
          // A statement that changes many rows at once, some to the same key.
          await handle.db.update(contracts).set({ status: 'completed' }).where(eq(contracts.status, 'processing'));
          for (const pick of deletions) await handle.db.delete(contracts).where(eq(contracts.id, rows[pick % rows.length]!.id!));
          await expectCountersMatchRows();
        },
      ),
      { numRuns: 25, seed: 20261125 },
    );
  }, 120_000);

  it('count nothing of a rolled-back write, and start again from zero after TRUNCATE', async () => {
    const scope = scopes[0]!;
    const before = await countContracts(handle.db, scope, {});
    await expect(
      handle.db.transaction(async (tx) => {
        await tx.insert(contracts).values(toRow({ owner: 0, org: null, status: 'completed', autoRenewal: true, expiration: DAYS[0]!, renewal: null }));
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    expect(await countContracts(handle.db, scope, {})).toBe(before);
    await expectCountersMatchRows();

    await handle.db.execute(sql`TRUNCATE contracts CASCADE`);
    await expectCountersMatchRows();
    expect(await countContracts(handle.db, scope, {})).toBe(0);
    await handle.db.insert(contracts).values(toRow({ owner: 0, org: 0, status: 'completed', autoRenewal: false, expiration: DAYS[1]!, renewal: DAYS[0]! }));
    await expectCountersMatchRows();
  });
});

describe('a text search total', () => {
  it('is exact up to the cap, and the cap with exact false beyond it', async () => {
    const scope = scopes[1]!;
    await handle.db.delete(contracts).where(inArray(contracts.ownerId, USERS));
    const match = (n: number) =>
      Array.from({ length: n }, () => ({ ...toRow({ owner: 1, org: 1, status: 'pending', autoRenewal: null, expiration: null, renewal: null }), title: 'Needle agreement' }));
    await handle.db.insert(contracts).values([...match(3), toRow({ owner: 1, org: null, status: 'pending', autoRenewal: null, expiration: null, renewal: null })]);
    const search = { search: 'needle' };
    expect(await countContractsBounded(handle.db, scope, search, { searchCap: 3 })).toEqual({ total: 3, exact: true });
    await handle.db.insert(contracts).values(match(2));
    expect(await countContractsBounded(handle.db, scope, search, { searchCap: 3 })).toEqual({ total: 3, exact: false });
    expect(await countContractsBounded(handle.db, scope, search, { searchCap: 5 })).toEqual({ total: 5, exact: true });
    // Without a cap (tools, tests): the exact count, however many.
    expect(await countContracts(handle.db, scope, search)).toBe(5);
  });
});
