import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '@/db/client';
import { countContractsBounded } from '@/db/queries/contracts/count';
import type { ContractFilters } from '@/db/queries/contracts/filters';
import { selectContractPage } from '@/db/queries/contracts/page';
import { FEW_MATCHES } from '@/db/queries/contracts/plan';
import { contracts, memberships, organizations, users, type NewContract } from '@/db/schema';
import { SORT_FIELDS, type SortField } from '@/lib/contracts';
import { choiceKind, everyStatement, selectWalkedPage, walkByCursor } from '../helpers/contract-pages';
import { createTestDatabase } from '../helpers/db';
import { naiveMatches, naiveOrder } from '../helpers/naive-contracts';

/**
 * q with a status other than completed (filters.ts, notCompletedStatus; plan.ts,
 * `matches`; migration 0017): the word is tested on the entries of an index of those
 * contracts, and sorted by anything but created_at each path counts its matches there up
 * to FEW_MATCHES, then walks the sort's index (more) or reads its matches and sorts them
 * (fewer). Here the personal path has more than FEW_MATCHES processing contracts with the
 * word in their title, the first organisation a few, the second none (its processing
 * contracts hold the word only in their parties, which are searched once completed).
 * Every page, by offset and by cursor both ways, and every capped count must be the naive
 * answer.
 */

let handle: DatabaseHandle;
const USER = '00000000-0000-4000-8000-0000000e0001';
const ORGS = ['00000000-0000-4000-8000-0000000e00a1', '00000000-0000-4000-8000-0000000e00a2'] as const;
const scope = { userId: USER, organizationIds: [...ORGS] };
const MANY = FEW_MATCHES + 300;
const rows: NewContract[] = [];
const TITLES = ['alpha', 'Initech window', 'window', 'Zeta INITECH'];

function row(i: number, organizationId: string | null, status: NewContract['status'], title: string): NewContract {
  return {
    id: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
    ownerId: USER,
    organizationId,
    title,
    // In the parties of others: searched only once completed.
    provider: i % 3 === 0 ? 'Initech Ltd' : 'Acme',
    status,
    fileName: 'f.pdf',
    fileSize: 1,
    // Ties on created_at, broken by id.
    createdAt: new Date(Date.UTC(2026, 0, 1, 0, (i * 7) % 61)),
    updatedAt: new Date(Date.UTC(2026, 5, 1 + (i % 20))),
    expirationDate: `2027-0${1 + (i % 9)}-15`,
    renewalDate: i % 4 === 0 ? null : '2027-01-01',
    contractValue: status === 'completed' && i % 5 !== 0 ? i % 13 : null,
    autoRenewal: i % 2 === 0,
  };
}

beforeAll(async () => {
  handle = await createTestDatabase();
  await handle.db.insert(users).values({ id: USER, email: 'not-completed-search@example.com' });
  await handle.db.insert(organizations).values(ORGS.map((id, i) => ({ id, name: `Not completed ${i}` })));
  await handle.db.insert(memberships).values(ORGS.map((organizationId) => ({ userId: USER, organizationId })));
  let i = 0;
  const statuses = ['processing', 'pending', 'failed', 'completed'] as const;
  // Personal: MANY processing contracts with the word in their title, among others.
  for (let n = 0; n < MANY; n++) rows.push(row(++i, null, 'processing', TITLES[1 + 2 * (n % 2)]!));
  for (let n = 0; n < 400; n++) rows.push(row(++i, null, statuses[n % 4]!, TITLES[n % 4]!));
  // First organisation: a few processing matches among 200 rows.
  for (let n = 0; n < 200; n++) rows.push(row(++i, ORGS[0], statuses[n % 4]!, n % 4 === 0 && n % 40 === 0 ? TITLES[1]! : TITLES[n % 2 === 0 ? 0 : 2]!));
  // Second organisation: processing contracts without the word in their title.
  for (let n = 0; n < 120; n++) rows.push(row(++i, ORGS[1], statuses[n % 4]!, n % 4 === 3 ? TITLES[3]! : TITLES[2]!));
  for (let at = 0; at < rows.length; at += 1000) await handle.db.insert(contracts).values(rows.slice(at, at + 1000));
  await handle.query('VACUUM ANALYZE contracts');
}, 120_000);
afterAll(async () => handle?.close());

const CASES: ContractFilters[] = [
  { status: 'processing', search: 'initech' },
  { status: 'pending', search: 'INITECH' },
  { status: 'failed', search: 'no such word' },
  { status: 'processing', search: 'initech', organizationId: ORGS[0] },
  { status: 'processing', search: 'initech', organizationId: ORGS[1] },
  { status: 'processing', search: 'initech', updatedSince: '2026-06-12T00:00:00Z' },
];

describe('q with a status other than completed', () => {
  it('has the paths this test needs: one with more than FEW_MATCHES matches, one with a few, one with none', () => {
    const perPath = [null, ...ORGS].map((org) => rows.filter((r) => r.organizationId === org && naiveMatches(r, CASES[0]!)).length);
    expect(perPath[0]).toBeGreaterThan(FEW_MATCHES);
    expect(perPath[1]).toBeGreaterThan(1);
    expect(perPath[1]).toBeLessThan(20);
    expect(perPath[2]).toBe(0);
    // The second organisation's processing contracts hold the word in their parties: not searched before completion.
    expect(rows.some((r) => r.organizationId === ORGS[1] && r.status === 'processing' && /initech/i.test(r.provider ?? ''))).toBe(true);
  });

  it('names its statements apart from the same filters with status=completed, and chooses per path for any sort but created_at', async () => {
    const names = (filters: ContractFilters, field: SortField) => everyStatement(scope, filters, { limit: 10, sort: { field, descending: true } }, { searchCap: 1000 }).map((s) => s.name);
    const kind = (filters: ContractFilters, field: SortField) => choiceKind(handle.db, scope, filters, { field, descending: true });
    const processing = { status: 'processing' as const, search: 'initech' };
    const completed = { status: 'completed' as const, search: 'initech' };
    expect(await kind(processing, 'title')).toBe('matches');
    expect(names(processing, 'title')[0]).toMatch(/ status,search not-completed /);
    expect(names(processing, 'created_at')[0]).toMatch(/ status,search not-completed .* deferred/);
    expect(await kind(processing, 'created_at')).toBe('matches');
    expect(await kind(completed, 'title')).toBeUndefined();
    expect(names(completed, 'title')[0]).not.toMatch(/not-completed/);
    // No statement of the one shares a name with a statement of the other (their texts differ).
    expect(names(processing, 'title').filter((name) => names(completed, 'title').includes(name))).toEqual([]);
    expect(await kind({ status: 'processing' }, 'title')).toBeUndefined();
  });

  it('gives one SQL text per statement name, over every status with and without q, other filters, sorts, offsets and cursors', () => {
    // Statements are prepared and cached by name (db/client.ts): two texts under one name
    // would run the first one's SQL for the second one's filters.
    const texts = new Map<string, string>();
    const record = (statement: { name: string; build(db: DatabaseHandle['db']): unknown } | undefined) => {
      if (!statement) return;
      const text = (statement.build(handle.db) as { toSQL(): { sql: string } }).toSQL().sql;
      expect(texts.get(statement.name) ?? text, statement.name).toBe(text);
      texts.set(statement.name, text);
    };
    const others: ContractFilters[] = [{}, { organizationId: ORGS[0] }, { updatedSince: '2026-06-01T00:00:00Z' }, { expirationTo: '2027-05-01' }, { expirationTo: '2027-05-01', renewalFrom: '2026-01-01' }, { autoRenewal: true }];
    for (const status of [undefined, 'completed', 'processing', 'pending', 'failed'] as const) {
      for (const search of [undefined, 'initech']) {
        for (const other of others) {
          const filters: ContractFilters = { ...other, ...(status ? { status } : {}), ...(search ? { search } : {}) };
          for (const field of SORT_FIELDS) {
            for (const descending of [false, true]) {
              const sort = { field, descending };
              const pages = [
                { limit: 10, sort },
                { limit: 10, offset: 20, sort },
                { limit: 10, sort, after: { key: null, id: USER } },
                { limit: 10, sort, after: { key: field === 'title' ? 'x' : field === 'contract_value' ? '1' : '2026-01-01', id: USER } },
              ];
              for (const page of pages) for (const options of [{ searchCap: 1000 }, {}]) everyStatement(scope, filters, page, options).forEach(record);
            }
          }
        }
      }
    }
    expect(texts.size).toBeGreaterThan(1000);
    // About 30,000 statements built: seconds alone, more beside another file on two cores.
  }, 120_000);

  it('answers a cursor with a key that no such contract has (a hand-made one: their keys of extracted data are null) like the naive sort', async () => {
    // After a non-null key of a nullable sort come the larger (or smaller) keys, then every
    // null: here all of them, since a contract that is not completed shows no extracted data.
    for (const filters of CASES) {
      for (const field of ['expiration_date', 'renewal_date', 'contract_value'] as const) {
        for (const descending of [false, true]) {
          const sort = { field, descending };
          const want = naiveOrder(rows, filters, field, descending);
          const after = { key: field === 'contract_value' ? '5' : '2027-01-01', id: '00000000-0000-4000-8000-000000000000' };
          const page = await selectContractPage(handle.db, scope, filters, { limit: 60, sort, after });
          expect(page.map((r) => r.id), `${JSON.stringify(filters)} ${field} ${descending}`).toEqual(want.slice(0, 60));
        }
      }
    }
  });

  it('counts exactly under the cap and bounds the count above it', async () => {
    for (const filters of CASES) {
      const want = rows.filter((r) => naiveMatches(r, filters)).length;
      for (const cap of [5, 1000, 100_000]) {
        expect(await countContractsBounded(handle.db, scope, filters, { searchCap: cap }), `${JSON.stringify(filters)} cap ${cap}`).toEqual(
          want > cap ? { total: cap, exact: false } : { total: want, exact: true },
        );
      }
      expect((await countContractsBounded(handle.db, scope, filters)).total).toBe(want);
    }
  });

  describe.each(CASES.map((filters) => ({ filters, name: JSON.stringify(filters) })))('$name', ({ filters }) => {
    it.each(SORT_FIELDS.flatMap((field) => [false, true].map((descending) => ({ field, descending }))))(
      'sorted by $field (descending: $descending): the full list, offset pages and a cursor walk are the naive sort',
      async (sort) => {
        const want = naiveOrder(rows, filters, sort.field, sort.descending);
        expect((await selectContractPage(handle.db, scope, filters, { limit: rows.length, sort })).map((r) => r.id)).toEqual(want);
        expect(await selectWalkedPage(handle.db, scope, filters, { limit: rows.length, sort })).toEqual(want);
        for (const offset of [0, 3, 50, MANY - 20]) {
          const page = await selectContractPage(handle.db, scope, filters, { limit: 50, offset, sort });
          expect(page.map((r) => r.id), `offset ${offset}`).toEqual(want.slice(offset, offset + 50));
        }
        expect(await walkByCursor(handle.db, scope, filters, sort, 397)).toEqual(want);
        // A short cursor walk with pages of 2 (through the small paths' sorted matches).
        if (filters.organizationId) expect(await walkByCursor(handle.db, scope, filters, sort, 2, 40)).toEqual(want);
      },
      120_000,
    );
  });

  it('keeps every title a contract may have: the index of those contracts holds the search text (500 characters of four bytes, or of a letter that grows when lower-cased)', async () => {
    const long = [String.fromCodePoint(0x2070e).repeat(500), 'İ'.repeat(500), '😀'.repeat(500)];
    const ids = long.map((_, n) => `00000000-0000-4000-8000-0000000ee${String(n).padStart(3, '0')}`);
    await handle.db.insert(contracts).values(long.map((title, n) => ({ ...row(900_000 + n, ORGS[1], 'pending', title), id: ids[n] })));
    const [found] = await handle.query<{ n: string }>(`SELECT count(*) AS n FROM contracts WHERE id = ANY($1::uuid[]) AND status = 'pending'`, [ids]);
    expect(Number(found!.n)).toBe(3);
    const page = await selectContractPage(handle.db, scope, { status: 'pending', search: 'İİ', organizationId: ORGS[1] }, { limit: 10 });
    expect(page.map((r) => r.id)).toEqual([ids[1]]);
    await handle.query(`DELETE FROM contracts WHERE id = ANY($1::uuid[])`, [ids]);
  });
});
