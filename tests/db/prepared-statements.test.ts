import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPostgres, type DatabaseHandle } from '@/db/client';
import { DEMO_USERS, seedDemo } from '@/db/seed/demo';
import { SORT_VALUES } from '@/lib/contracts';
import { loadScope } from '@/server/access/scope';
import { toContractFilters, toSort } from '@/server/contracts/query';
import { contractsInPages, listContracts } from '@/server/contracts/service';
import { createTestDatabase, PREPARE } from '../helpers/db';

/**
 * Postgres keeps every named prepared statement of a connection until the connection
 * closes. The renewal filters and sorts make hundreds of statement shapes: they must not
 * pile up there, while the spec's own shapes stay prepared.
 */
// With DATABASE_PREPARE=false (behind a transaction-mode pooler) nothing is prepared on the server.
describe.skipIf(!process.env.DATABASE_URL || !PREPARE)('prepared statements on the server (Postgres, DATABASE_PREPARE not false)', () => {
  let setup: DatabaseHandle;
  let single: DatabaseHandle;
  beforeAll(async () => {
    setup = await createTestDatabase();
    await seedDemo(setup.db);
    // One connection, so that pg_prepared_statements shows everything this pool prepared.
    const [{ db: name } = { db: '' }] = await setup.query<{ db: string }>('select current_database() as db');
    const target = new URL(process.env.DATABASE_URL!);
    target.pathname = `/${name}`;
    single = await openPostgres(target.toString(), { max: 1 });
  });
  afterAll(async () => {
    await single?.close();
    await setup?.close();
  });

  const preparedCount = async () => (await single.query<{ n: number }>('select count(*)::int as n from pg_prepared_statements'))[0]!.n;

  it('leaves the many renewal shapes unnamed, and prepares the spec shapes once', async () => {
    const { scope } = await loadScope(single.db, DEMO_USERS.bob.id);
    const params = [
      {},
      { expiring_within_days: 30 },
      { renewing_within_days: 90, auto_renewal: true },
      { expires_after: '2027-01-01', q: 'lease' },
      { renews_before: '2028-01-01', updated_since: '2026-01-01T00:00:00Z' },
      { auto_renewal: false, expires_before: '2030-01-01' },
    ];
    for (const p of params) {
      for (const sort of SORT_VALUES) {
        await listContracts(single.db, scope, { filters: toContractFilters(p), sort: toSort(sort), limit: 5, offset: 0 });
        for await (const page of contractsInPages(single.db, scope, toContractFilters(p), 2, toSort(sort))) void page;
      }
    }
    // 6 filter shapes × 12 sorts × (list, count, export pages) ran; prepared on the server:
    // only the memberships lookup and the default list, count and export page statements.
    const prepared = await preparedCount();
    expect(prepared).toBeGreaterThan(0);
    expect(prepared).toBeLessThanOrEqual(8);
  });
});
