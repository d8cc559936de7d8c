import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '@/db/client';
import { countContractsBounded } from '@/db/queries/contracts/count';
import type { ContractFilters } from '@/db/queries/contracts/filters';
import { selectContractPage } from '@/db/queries/contracts/page';
import { SEARCH_RANGE_ROWS, WINDOW_FEW_MATCHES } from '@/db/queries/contracts/plan';
import { contracts, memberships, organizations, users, type NewContract } from '@/db/schema';
import type { SortField } from '@/lib/contracts';
import { choiceKind, selectWalkedPage, walkByCursor } from '../helpers/contract-pages';
import { createTestDatabase } from '../helpers/db';
import { naiveMatches, naiveOrder } from '../helpers/naive-contracts';

/**
 * A date window sorted by the other date (or, with q, by anything) reads each access path one of two ways, chosen
 * per path by how many of its rows are in the window (plan.ts, WINDOW_FEW_MATCHES): a walk
 * of the sort's index, or the window's range read from its covering index, sorted, and the
 * page's rows read by id. Here the personal path has more rows in the windows than
 * WINDOW_FEW_MATCHES (walked), one organisation a few (its range, with null keys, ties and
 * rows whose status hides their dates) and the other none: every page, by offset and by
 * cursor in both directions, must be the naive sort of the matching rows.
 */

let handle: DatabaseHandle;
const USER = '00000000-0000-4000-8000-0000000f0001';
const ORGS = ['00000000-0000-4000-8000-0000000f00a1', '00000000-0000-4000-8000-0000000f00a2'] as const;
const scope = { userId: USER, organizationIds: [...ORGS] };

const MANY = WINDOW_FEW_MATCHES + 2_500;
const rows: NewContract[] = [];

function row(i: number, organizationId: string | null, inWindows: boolean, status: NewContract['status']): NewContract {
  return {
    id: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
    ownerId: USER,
    organizationId,
    // q: the word in some titles, and in the provider of others (searched only once completed).
    title: i % 5 === 0 ? 'Initech window' : 'window',
    provider: i % 4 === 1 ? 'INITECH Ltd' : 'Acme',
    status,
    fileName: 'f.pdf',
    fileSize: 1,
    createdAt: new Date(Date.UTC(2026, 0, 1, 0, (i * 13) % 97)),
    updatedAt: new Date(Date.UTC(2026, 5, 1 + (i % 20))),
    // Few distinct dates: many ties, broken by id.
    expirationDate: inWindows ? `2027-03-${String(1 + ((i * 5) % 31)).padStart(2, '0')}` : `2028-0${1 + (i % 9)}-15`,
    renewalDate: i % 11 === 0 ? null : inWindows ? `2027-02-${String(1 + ((i * 3) % 28)).padStart(2, '0')}` : '2028-06-01',
    autoRenewal: i % 10 === 0 ? null : i % 10 !== 5,
  };
}

beforeAll(async () => {
  handle = await createTestDatabase();
  await handle.db.insert(users).values({ id: USER, email: 'walk-or-window@example.com' });
  await handle.db.insert(organizations).values(ORGS.map((id, i) => ({ id, name: `Window ${i}` })));
  await handle.db.insert(memberships).values(ORGS.map((organizationId) => ({ userId: USER, organizationId })));
  let i = 0;
  // Personal: MANY completed rows in both windows, and some outside (before them in a descending walk).
  for (let n = 0; n < MANY; n++) rows.push(row(++i, null, true, 'completed'));
  for (let n = 0; n < 100; n++) rows.push(row(++i, null, false, n % 2 ? 'completed' : 'pending'));
  // First organisation: 9 rows with window dates (2 pending: their dates are not shown, so not in a window), 150 outside.
  for (let n = 0; n < 9; n++) rows.push(row(++i, ORGS[0], true, n < 2 ? 'pending' : 'completed'));
  for (let n = 0; n < 150; n++) rows.push(row(++i, ORGS[0], false, n % 3 ? 'completed' : 'failed'));
  // Second organisation: none in the windows.
  for (let n = 0; n < 40; n++) rows.push(row(++i, ORGS[1], false, 'completed'));
  for (let at = 0; at < rows.length; at += 1000) await handle.db.insert(contracts).values(rows.slice(at, at + 1000));
  await handle.query('VACUUM ANALYZE contracts');
}, 120_000);
afterAll(async () => handle?.close());

const EXPIRING = { expirationFrom: '2027-03-01', expirationTo: '2027-03-31' };
const RENEWING = { renewalFrom: '2027-02-01', renewalTo: '2027-02-28' };
const CASES: { filters: ContractFilters; field: SortField }[] = [
  { filters: EXPIRING, field: 'renewal_date' },
  { filters: { expirationTo: '2027-03-25' }, field: 'renewal_date' },
  { filters: RENEWING, field: 'expiration_date' },
  { filters: { ...EXPIRING, status: 'completed' }, field: 'renewal_date' },
  { filters: { ...EXPIRING, autoRenewal: true }, field: 'renewal_date' },
  { filters: { ...RENEWING, autoRenewal: false }, field: 'expiration_date' },
  { filters: { ...EXPIRING, organizationId: ORGS[0] }, field: 'renewal_date' },
  { filters: { ...EXPIRING, ...RENEWING }, field: 'renewal_date' },
  { filters: { ...EXPIRING, updatedSince: '2026-06-10T00:00:00Z' }, field: 'renewal_date' },
  // q with a window, whatever the sort (searchWindow in page.ts).
  { filters: { ...EXPIRING, search: 'initech' }, field: 'created_at' },
  { filters: { ...RENEWING, search: 'INITECH' }, field: 'title' },
  { filters: { ...EXPIRING, search: 'initech' }, field: 'expiration_date' },
  { filters: { ...EXPIRING, ...RENEWING, search: 'initech' }, field: 'updated_at' },
  { filters: { ...EXPIRING, search: 'initech', organizationId: ORGS[0] }, field: 'contract_value' },
];

describe('a date window sorted by the other date: each path walks or reads its window', () => {
  it('has the paths this test needs: one with WINDOW_FEW_MATCHES or more, one with a few, one with none', async () => {
    const perPath = (f: ContractFilters) => [null, ...ORGS].map((org) => rows.filter((r) => r.organizationId === org && naiveMatches(r, f)).length);
    for (const filters of [EXPIRING, RENEWING]) {
      const [personal, few, none] = perPath(filters);
      expect(personal).toBeGreaterThanOrEqual(WINDOW_FEW_MATCHES);
      expect(few).toBeGreaterThan(3);
      expect(few).toBeLessThan(20);
      expect(none).toBe(0);
    }
    // The choice reads the per-day counters: they agree (the personal path walks, the first organisation reads its window).
    const [counted] = await handle.query<{ personal: string; few: string }>(
      `select sum(n) filter (where personal) as personal, sum(n) filter (where scope_id = '${ORGS[0]}') as few
       from contract_date_counts where kind = 'e' and day between '2027-03-01' and '2027-03-31'`,
    );
    expect(Number(counted!.personal)).toBe(perPath(EXPIRING)[0]);
    expect(Number(counted!.few)).toBe(perPath(EXPIRING)[1]);
  });

  it('chooses only for a window sorted by the other date, or with q', async () => {
    const kind = (filters: ContractFilters, field: SortField) => choiceKind(handle.db, scope, filters, { field, descending: true });
    expect(await kind(EXPIRING, 'renewal_date')).toBe('window');
    expect(await kind(RENEWING, 'expiration_date')).toBe('window');
    expect(await kind(EXPIRING, 'expiration_date')).toBeUndefined();
    expect(await kind(EXPIRING, 'created_at')).toBeUndefined();
    expect(await kind(RENEWING, 'title')).toBeUndefined();
    // With q, a window chooses whatever the sort.
    expect(await kind({ ...RENEWING, search: 'initech' }, 'title')).toBe('window');
    expect(await kind({ search: 'initech' }, 'title')).toBeUndefined();
    // A window sorted by the other date chooses before updated_since; sorted by another key, updated_since does.
    expect(await kind({ ...EXPIRING, updatedSince: '2026-01-01T00:00:00Z' }, 'renewal_date')).toBe('window');
    expect(await kind({ ...EXPIRING, updatedSince: '2026-01-01T00:00:00Z' }, 'title')).toBe('range');
  });

  it('counts q alone, with a window or with updated_since exactly under the cap, whichever way each path reads (plan.ts, SEARCH_RANGE_ROWS)', async () => {
    // The personal path holds SEARCH_RANGE_ROWS or more rows of each range (it walks in list
    // order), the organisations fewer (they walk their range, the word tested on each row).
    expect(MANY).toBeGreaterThanOrEqual(SEARCH_RANGE_ROWS);
    const since = { updatedSince: '2026-06-05T00:00:00Z' };
    for (const filters of [
      { ...since, search: 'initech' },
      { ...since, search: 'no such word' },
      { ...since, search: 'initech', organizationId: ORGS[0] },
      { ...EXPIRING, search: 'INITECH' },
      { ...RENEWING, search: 'initech', autoRenewal: true },
      { expirationTo: '2028-12-31', search: 'initech', status: 'completed' as const },
      // No range: each path is its own (a small one walked whole, without the trigram index).
      { search: 'initech' },
      { search: 'INITECH', status: 'pending' as const },
    ]) {
      const want = rows.filter((r) => naiveMatches(r, filters)).length;
      for (const cap of [5, 1000, 100_000]) {
        expect(await countContractsBounded(handle.db, scope, filters, { searchCap: cap }), `${JSON.stringify(filters)} cap ${cap}`).toEqual(
          want > cap ? { total: cap, exact: false } : { total: want, exact: true },
        );
      }
    }
  });

  describe.each(CASES)('$filters sorted by $field', ({ filters, field }) => {
    it.each([false, true])(
      'descending=%s: the full list, offset pages and a cursor walk are the naive sort',
      async (descending) => {
        const sort = { field, descending };
        const want = naiveOrder(rows, filters, field, descending);
        expect(await choiceKind(handle.db, scope, filters, sort)).toBe('window');
        expect((await selectContractPage(handle.db, scope, filters, { limit: MANY + 100, sort })).map((r) => r.id)).toEqual(want);
        expect(await selectWalkedPage(handle.db, scope, filters, { limit: MANY + 100, sort })).toEqual(want);
        for (const offset of [0, 3, 50, MANY - 20]) {
          const page = await selectContractPage(handle.db, scope, filters, { limit: 50, offset, sort });
          expect(page.map((r) => r.id), `offset ${offset}`).toEqual(want.slice(offset, offset + 50));
        }
        expect(await walkByCursor(handle.db, scope, filters, sort, 997)).toEqual(want);
        if (filters.search !== undefined) {
          // The capped count of q walks the window's date (count.ts): exact under the cap.
          const counted = await countContractsBounded(handle.db, scope, filters, { searchCap: 1000 });
          expect(counted).toEqual(want.length > 1000 ? { total: 1000, exact: false } : { total: want.length, exact: true });
          expect((await countContractsBounded(handle.db, scope, filters)).total).toBe(want.length);
        }
        // A short cursor walk through the small path alone (every page from its range).
        if (filters.organizationId) expect(await walkByCursor(handle.db, scope, filters, sort, 2, 20)).toEqual(want);
      },
      180_000,
    );
  });
});
