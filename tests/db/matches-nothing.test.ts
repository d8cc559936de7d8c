import { and, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runStatement, type DatabaseHandle } from '@/db/client';
import { contractCountStatement, countContracts } from '@/db/queries/contracts/count';
import { filterClauses, filterShape, filterShapeName, matchesNothing, type ContractFilters } from '@/db/queries/contracts/filters';
import { selectContractPage } from '@/db/queries/contracts/page';
import { everyStatement } from '../helpers/contract-pages';
import { contracts, users } from '@/db/schema';
import { CONTRACT_STATUSES } from '@/lib/contracts';
import { createTestDatabase } from '../helpers/db';

/**
 * A list whose filters contradict each other (a status other than completed with a filter
 * on extracted data) is answered without a query. The shortcut must never hide a match:
 * each filter combination below is also run as the plain SQL of its clauses, over rows of
 * every status whose raw extracted columns are filled in (a pending contract can carry
 * dates from an earlier extraction; the API does not show them).
 */

let handle: DatabaseHandle;
const USER = '00000000-0000-4000-8000-0000000d0001';
const scope = { userId: USER, organizationIds: [] };

beforeAll(async () => {
  handle = await createTestDatabase();
  await handle.db.insert(users).values({ id: USER, email: 'nothing@example.com' });
  await handle.db.insert(contracts).values(
    CONTRACT_STATUSES.flatMap((status, i) =>
      [true, false].map((autoRenewal, j) => ({
        id: `00000000-0000-4000-8000-0000000d1${i}${j}0`,
        ownerId: USER,
        title: `Contradiction ${status}`,
        status,
        fileName: 'c.pdf',
        fileSize: 1,
        autoRenewal,
        expirationDate: '2027-01-10',
        renewalDate: '2026-12-10',
      })),
    ),
  );
});
afterAll(async () => handle?.close());

const EXTRACTED: ContractFilters[] = [
  { expirationFrom: '2027-01-01' },
  { expirationTo: '2027-02-01' },
  { renewalFrom: '2026-12-01', renewalTo: '2026-12-31' },
  { autoRenewal: true },
  { autoRenewal: false },
  { datesFrom: '2026-01-01' },
];
const OTHER: ContractFilters[] = [{}, { search: 'contradiction' }, { updatedSince: '2020-01-01T00:00:00Z' }];

/** The rows the filters' own SQL clauses select, without any shortcut. */
async function plainCount(filters: ContractFilters): Promise<number> {
  const shape = filterShape(filters);
  const rows = await runStatement(handle.db, {
    name: `matches-nothing plain ${filterShapeName(shape)}`,
    build: (db) => db.select({ n: sql<number>`count(*)::int` }).from(contracts).where(and(sql`${contracts.ownerId} = ${USER}`, ...filterClauses(shape))),
    values: shape.values,
    prepareOnServer: false,
  });
  return Number(rows[0]!.n);
}

describe('contradictory filters', () => {
  it('are exactly those whose clauses select no row, and the list answers them without a statement', async () => {
    let contradictions = 0;
    for (const status of [undefined, ...CONTRACT_STATUSES]) {
      for (const extracted of [{}, ...EXTRACTED]) {
        for (const other of OTHER) {
          const filters: ContractFilters = { ...extracted, ...other, ...(status ? { status } : {}) };
          const label = JSON.stringify(filters);
          const expected = await plainCount(filters);
          if (matchesNothing(filters)) {
            contradictions++;
            expect(expected, label).toBe(0);
            expect(everyStatement(scope, filters, { limit: 10 }), label).toEqual([]);
            expect(contractCountStatement(scope, filters), label).toBeUndefined();
          } else {
            expect(everyStatement(scope, filters, { limit: 10 }).length, label).toBeGreaterThan(0);
          }
          expect((await selectContractPage(handle.db, scope, filters, { limit: 100 })).length, label).toBe(expected);
          expect(await countContracts(handle.db, scope, filters), label).toBe(expected);
        }
      }
    }
    // Every status but completed, with each filter on extracted data, with each other filter.
    expect(contradictions).toBe((CONTRACT_STATUSES.length - 1) * EXTRACTED.length * OTHER.length);
  });
});
