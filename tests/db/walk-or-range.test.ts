import { SORT_KEYS } from '@/db/queries/contracts/expressions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '@/db/client';
import type { ContractFilters } from '@/db/queries/contracts/filters';
import { pageStatements, selectContractPage, type Cursor } from '@/db/queries/contracts/page';
import { FEW_MATCHES } from '@/db/queries/contracts/plan';
import { planContractList } from '@/db/queries/contracts/planning';
import { contracts, memberships, organizations, users, type NewContract } from '@/db/schema';
import { SORT_FIELDS, type SortField } from '@/lib/contracts';
import { choiceKind, selectWalkedPage, walkByCursor } from '../helpers/contract-pages';
import { createTestDatabase } from '../helpers/db';
import { naiveMatches, naiveOrder } from '../helpers/naive-contracts';

/**
 * updated_since sorted by another key reads each access path one of two ways, chosen per
 * path by how many of its rows match (plan.ts, FEW_MATCHES): a walk of the sort's index,
 * or the filter's range sorted. The date windows (which walk) are checked the same way. Here
 * the personal path has more matches than FEW_MATCHES (walked), one organisation a few
 * (its range, with null keys and ties among them) and the other none: every page, by
 * offset and by cursor in both directions, must be the naive sort of the matching rows
 * (key with nulls last, then id, both in the sort's direction).
 */

let handle: DatabaseHandle;
const USER = '00000000-0000-4000-8000-0000000e0001';
const ORGS = ['00000000-0000-4000-8000-0000000e00a1', '00000000-0000-4000-8000-0000000e00a2'] as const;
const scope = { userId: USER, organizationIds: [...ORGS] };

const MANY = FEW_MATCHES + FEW_MATCHES / 2;
const TITLES = ['alpha', 'beta', 'gamma', 'delta'];
const rows: NewContract[] = [];

/** A row of `path`; `match` decides whether it is in every filter's range below. */
function row(i: number, organizationId: string | null, match: boolean, status: NewContract['status']): NewContract {
  return {
    id: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
    ownerId: USER,
    organizationId,
    title: TITLES[(i * 7) % TITLES.length]!,
    status,
    fileName: 'f.pdf',
    fileSize: 1,
    createdAt: new Date(Date.UTC(2026, 0, 1, 0, (i * 13) % 97)),
    updatedAt: match ? new Date(Date.UTC(2027, 0, 1 + (i % 20))) : new Date(Date.UTC(2026, 5, 1 + (i % 20))),
    expirationDate: match ? `2027-03-${String(1 + ((i * 5) % 31)).padStart(2, '0')}` : `2028-0${1 + (i % 9)}-15`,
    renewalDate: i % 11 === 0 ? null : match ? `2027-02-${String(1 + ((i * 3) % 28)).padStart(2, '0')}` : '2028-06-01',
    contractValue: i % 9 === 0 ? null : ((i * 37) % 11) * 100,
    autoRenewal: i % 10 === 0 ? null : i % 10 !== 5,
  };
}

beforeAll(async () => {
  handle = await createTestDatabase();
  await handle.db.insert(users).values({ id: USER, email: 'walk-or-range@example.com' });
  await handle.db.insert(organizations).values(ORGS.map((id, i) => ({ id, name: `Range ${i}` })));
  await handle.db.insert(memberships).values(ORGS.map((organizationId) => ({ userId: USER, organizationId })));
  let i = 0;
  // Personal: MANY completed rows in every range, and some outside.
  for (let n = 0; n < MANY; n++) rows.push(row(++i, null, true, 'completed'));
  for (let n = 0; n < 100; n++) rows.push(row(++i, null, false, n % 2 ? 'completed' : 'pending'));
  // First organisation: 7 rows in the ranges (2 pending: in updated_since only, with null dates and value), 150 outside.
  for (let n = 0; n < 7; n++) rows.push(row(++i, ORGS[0], true, n < 2 ? 'pending' : 'completed'));
  for (let n = 0; n < 150; n++) rows.push(row(++i, ORGS[0], false, n % 3 ? 'completed' : 'failed'));
  // Second organisation: none in the ranges.
  for (let n = 0; n < 40; n++) rows.push(row(++i, ORGS[1], false, 'completed'));
  for (let at = 0; at < rows.length; at += 500) await handle.db.insert(contracts).values(rows.slice(at, at + 500));
  await handle.query('ANALYZE contracts');
}, 60_000);
afterAll(async () => handle?.close());

const CASES: { filters: ContractFilters; field: SortField }[] = [
  { filters: { updatedSince: '2027-01-01T00:00:00Z' }, field: 'updated_at' },
  { filters: { updatedSince: '2027-01-01T00:00:00+00:00', organizationId: ORGS[0] }, field: 'updated_at' },
  // Another filter only removes rows from the range: the same choice.
  { filters: { updatedSince: '2027-01-01T00:00:00Z', status: 'completed' }, field: 'updated_at' },
  { filters: { updatedSince: '2027-01-01T00:00:00Z', autoRenewal: true }, field: 'updated_at' },
  { filters: { updatedSince: '2027-01-01T00:00:00Z', expirationFrom: '2027-03-01', expirationTo: '2027-03-31' }, field: 'updated_at' },
  { filters: { updatedSince: '2027-01-01T00:00:00Z', search: 'ALPHA' }, field: 'updated_at' },
  { filters: { expirationFrom: '2027-03-01', expirationTo: '2027-03-31' }, field: 'expiration_date' },
  { filters: { expirationTo: '2027-03-25' }, field: 'expiration_date' },
  { filters: { renewalFrom: '2027-02-01', renewalTo: '2027-02-28' }, field: 'renewal_date' },
];

describe('a range filter sorted by another key: each path walks or reads its range', () => {
  it('has the paths this test needs: one with FEW_MATCHES or more, one with a few, one with none', () => {
    const perPath = (f: ContractFilters) => [null, ...ORGS].map((org) => rows.filter((r) => r.organizationId === org && naiveMatches(r, f)).length);
    // (With q the choice still counts the range, not the matches: those cases are left out here.)
    for (const { filters } of CASES.filter((c) => c.filters.search === undefined && !c.filters.organizationId)) {
      const [personal, few, none] = perPath(filters);
      expect(personal).toBeGreaterThanOrEqual(FEW_MATCHES);
      expect(few).toBeGreaterThan(0);
      expect(few).toBeLessThan(20);
      expect(none).toBe(0);
    }
  });

  it('after a non-null key of a nullable sort, reads the later keys in one statement and the null keys in a second one, whatever the filters', async () => {
    const sort = { field: 'expiration_date' as const, descending: true };
    const after: Cursor = { key: '2027-03-10', id: rows[0]!.id! };
    for (const filters of [{ updatedSince: '2027-01-01T00:00:00Z' }, { updatedSince: '2027-01-01T00:00:00Z', autoRenewal: true }, { updatedSince: '2027-01-01T00:00:00Z', expirationFrom: '2027-03-01' }]) {
      const list = (await planContractList(handle.db, scope, filters, { sort, after }))!;
      expect(list.plan.page.cursor).toBe('after-key-then-nulls');
      const { first, thenNulls } = pageStatements(list, { limit: 10, sort, after });
      expect(first.build(handle.db).toSQL().sql).not.toMatch(/END\)? IS NULL/);
      expect(thenNulls!.build(handle.db).toSQL().sql).toMatch(/END\)? IS NULL/);
    }
  });

  describe.each(CASES)('$filters', ({ filters, field: rangeField }) => {
    it.each(SORT_FIELDS.flatMap((field) => [false, true].map((descending) => ({ field, descending }))))(
      'sort $field descending=$descending: the full list, offset pages and a cursor walk are the naive sort',
      async (sort) => {
        const want = naiveOrder(rows, filters, sort.field, sort.descending);
        // Only updated_since (with any other filter) chooses (plan.ts); the date windows alone walk, checked all the
        // same; a window sorted by the other date chooses its own way first (tests/db/walk-or-window.test.ts).
        const windows = [
          ...(filters.expirationFrom !== undefined || filters.expirationTo !== undefined ? (['expiration'] as const) : []),
          ...(filters.renewalFrom !== undefined || filters.renewalTo !== undefined ? (['renewal'] as const) : []),
        ];
        const otherDate = windows.some((date) => SORT_KEYS[sort.field].correlatedWindows.includes(date));
        const ranges = filters.updatedSince !== undefined && sort.field !== rangeField && !otherDate;
        expect(await choiceKind(handle.db, scope, filters, sort)).toBe(ranges ? 'range' : otherDate ? 'window' : undefined);

        expect((await selectContractPage(handle.db, scope, filters, { limit: 5000, sort })).map((r) => r.id)).toEqual(want);
        // Every path walked (the other branch of each path's choice) gives the same answer.
        expect(await selectWalkedPage(handle.db, scope, filters, { limit: 5000, sort })).toEqual(want);
        for (const offset of [0, 3, 50, MANY - 20]) {
          const page = await selectContractPage(handle.db, scope, filters, { limit: 50, offset, sort });
          expect(page.map((r) => r.id), `offset ${offset}`).toEqual(want.slice(offset, offset + 50));
        }
        expect(await walkByCursor(handle.db, scope, filters, sort, 97)).toEqual(want);
      },
      60_000,
    );
  });
});
