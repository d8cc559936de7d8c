import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '@/db/client';
import { detailColumns, type ContractDetailRow } from '@/db/queries/contracts/columns';
import type { ContractFilters } from '@/db/queries/contracts/filters';
import { contractPageStatement, pageStatements, selectContractPage, type Cursor } from '@/db/queries/contracts/page';
import { planContractList } from '@/db/queries/contracts/planning';
import { contracts, memberships, organizations, users, type NewContract } from '@/db/schema';
import { StatementTexts } from '../../scripts/bench/statements';
import { createTestDatabase } from '../helpers/db';
import { naiveMatches, naiveOrder, naiveSortKey } from '../helpers/naive-contracts';

/**
 * After a non-null key of a nullable sort, each access path has two ranges: keys after the
 * cursor's, then the null keys (page.ts, afterCursor). The null ranges must not be read
 * while the first ranges fill the page: with a filter that no null-key row passes (a
 * renewal window sorted by expiration date: here every row with a renewal date has an
 * expiration date), they were walked to their end on every page after the first (200 to
 * 500 ms at 2M). Checked on the plan (the null ranges' scans never run), and on the rows:
 * a page after every row of the list, with and without such a filter, in both directions,
 * is the naive sort (key with nulls last, then id), across the boundary where the keys
 * run out and the nulls begin.
 */

let handle: DatabaseHandle;
const USER = '00000000-0000-4000-8000-0000000d0001';
const ORGS = ['00000000-0000-4000-8000-0000000d00a1', '00000000-0000-4000-8000-0000000d00a2'] as const;
const scope = { userId: USER, organizationIds: [...ORGS] };
const rows: NewContract[] = [];

function row(i: number, organizationId: string | null): NewContract {
  const status = i % 7 === 0 ? 'pending' : 'completed';
  // A few ties on every key, and nulls: no expiration (so no renewal) every fifth row.
  const expirationDate = i % 5 === 0 ? null : `2027-0${1 + (i % 6)}-${String(1 + (i % 4)).padStart(2, '0')}`;
  return {
    id: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
    ownerId: USER,
    organizationId,
    title: `T${i}`,
    status,
    fileName: 'f.pdf',
    fileSize: 1,
    expirationDate,
    renewalDate: expirationDate !== null && i % 2 !== 0 ? `2026-1${i % 3}-0${1 + (i % 5)}` : null,
    contractValue: i % 4 === 0 ? null : (i % 9) * 100,
  };
}

beforeAll(async () => {
  handle = await createTestDatabase();
  await handle.db.insert(users).values({ id: USER, email: 'cursor-nulls@example.com' });
  await handle.db.insert(organizations).values(ORGS.map((id, i) => ({ id, name: `Nulls ${i}` })));
  await handle.db.insert(memberships).values(ORGS.map((organizationId) => ({ userId: USER, organizationId })));
  const paths = [null, ...ORGS];
  for (let i = 1; i <= 90; i++) rows.push(row(i, paths[i % 3]!));
  await handle.db.insert(contracts).values(rows);
  await handle.query('ANALYZE contracts');
});
afterAll(async () => handle?.close());

const RENEWING: ContractFilters = { renewalFrom: '2026-10-01', renewalTo: '2026-12-31' };

interface PlanNode {
  'Node Type': string;
  'Actual Loops': number;
  'Index Cond'?: string;
  Filter?: string;
  'Recheck Cond'?: string;
  Plans?: PlanNode[];
}

function* nodes(node: PlanNode): Generator<PlanNode> {
  yield node;
  for (const child of node.Plans ?? []) yield* nodes(child);
}

const SORTS = (['expiration_date', 'renewal_date', 'contract_value'] as const).flatMap((field) => [false, true].map((descending) => ({ field, descending })));

describe('a page after a non-null key of a nullable sort', () => {
  it('has the rows this test needs: the renewal window keeps no row without an expiration date, and some in every path', () => {
    const kept = rows.filter((r) => naiveMatches(r, RENEWING));
    expect(kept.every((r) => naiveSortKey(r, 'expiration_date') !== null)).toBe(true);
    for (const org of [null, ...ORGS]) expect(kept.filter((r) => r.organizationId === org).length).toBeGreaterThan(5);
    expect(rows.filter((r) => naiveSortKey(r, 'expiration_date') === null).length).toBeGreaterThan(10);
  });

  it.each([false, true])('renewal window sorted by expiration date (descending=%s): the null ranges are never read while the keys fill the page', async (descending) => {
    const sort = { field: 'expiration_date' as const, descending };
    const want = naiveOrder(rows, RENEWING, sort.field, descending);
    const first = rows.find((r) => r.id === want[0])!;
    const cursor: Cursor = { key: naiveSortKey(first, sort.field) as string, id: first.id! };
    // The later keys are one statement with no null range; the nulls are a second one, run only when the keys run out (plan.ts).
    const list = (await planContractList(handle.db, scope, RENEWING, { sort, after: cursor }))!;
    const statements = pageStatements(list, { limit: 5, sort, after: cursor });
    const { text, params } = new StatementTexts(handle.db).compile(statements.first as never);
    const [result] = await handle.query<{ 'QUERY PLAN': unknown }>(`EXPLAIN (ANALYZE, FORMAT JSON) ${text}`, params);
    const raw = result!['QUERY PLAN'];
    const plan = (typeof raw === 'string' ? JSON.parse(raw) : raw) as [{ Plan: PlanNode }];
    const nullScans = [...nodes(plan[0].Plan)].filter((n) => [n['Index Cond'], n.Filter, n['Recheck Cond']].some((c) => c !== undefined && /END\)? IS NULL/.test(c)));
    expect(nullScans).toEqual([]);
    expect(statements.thenNulls!.build(handle.db).toSQL().sql).toMatch(/END\)? IS NULL/);
    // And the page itself is right.
    const page = await selectContractPage(handle.db, scope, RENEWING, { limit: 5, sort, after: cursor });
    expect(page.map((r) => r.id)).toEqual(want.slice(1, 6));
    // The export reads the same statement with the detail columns.
    const detail = await selectContractPage<ContractDetailRow>(handle.db, scope, RENEWING, { limit: 5, sort, after: cursor }, detailColumns);
    expect(detail.map((r) => [r.id, r.expirationDate, r.renewalDate])).toEqual(want.slice(1, 6).map((id) => rows.find((r) => r.id === id)!).map((r) => [r.id, r.expirationDate, r.renewalDate]));
  });

  describe.each([
    { name: 'no filter', filters: {} as ContractFilters },
    { name: 'renewal window', filters: RENEWING },
    // Every key null (shown only once completed): the walks start at the null range (plan.ts, nullKeys).
    { name: 'status pending', filters: { status: 'pending' } as ContractFilters },
  ])('$name', ({ filters }) => {
    it.each(SORTS)('sort $field descending=$descending: the page after every row is the naive sort', async (sort) => {
      const want = naiveOrder(rows, filters, sort.field, sort.descending);
      const all = await selectContractPage(handle.db, scope, filters, { limit: 200, sort });
      expect(all.map((r) => r.id)).toEqual(want);
      for (const limit of [1, 4]) {
        for (let at = 0; at < all.length; at++) {
          const after = { key: all[at]!.sortKeyText, id: all[at]!.id };
          const page = await selectContractPage(handle.db, scope, filters, { limit, sort, after });
          expect(page.map((r) => r.id), `limit ${limit} after row ${at} (${after.key})`).toEqual(want.slice(at + 1, at + 1 + limit));
        }
      }
      // The boundary is in the list: the keys run out before its end (no filter), or not at all (the window).
      const nulls = all.filter((r) => r.sortKeyText === null).length;
      if (filters.status === 'pending') {
        expect(nulls).toBe(all.length);
        expect(all.length).toBeGreaterThan(5);
        expect(contractPageStatement(scope, filters, { limit: 5, sort })!.name).toMatch(/ null-keys$/);
      } else if (filters.renewalFrom === undefined) expect(nulls).toBeGreaterThan(0);
      else if (sort.field !== 'contract_value') expect(nulls).toBe(0);
    });
  });
});
