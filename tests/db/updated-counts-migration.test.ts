import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrateDatabase, type DatabaseHandle } from '@/db/client';
import { countContracts } from '@/db/queries/contracts/count';
import { CONTRACT_STATUSES } from '@/lib/contracts';
import { createTestDatabase } from '../helpers/db';
import { migrationsBefore } from '../helpers/migrations-before';
import { twoMembers } from '../helpers/two-members';

/**
 * Migration 0009 gives contract_updated_counts the status and auto_renewal keys and
 * counts the table again: contracts written under 0008 (its triggers, its keys) come out
 * as a recount by path, UTC day, status and auto_renewal, and the totals of updated_since
 * with a status or auto_renewal equal the rows; writes after it keep them so.
 */

const MIGRATED_BEFORE = 9; // 0000..0008

let handle: DatabaseHandle;
let before: ReturnType<typeof migrationsBefore>;
const { USERS, ORGS, scopes, insert: insertMembers } = twoMembers('e', 'upgrade');

beforeAll(async () => {
  before = migrationsBefore(MIGRATED_BEFORE);
  handle = await createTestDatabase({ migrationsFolder: before.folder });
});
afterAll(async () => {
  await handle?.close();
  before?.remove();
});

const RECOUNT = `
  SELECT organization_id IS NULL AS personal, coalesce(organization_id, owner_id) AS scope_id, (updated_at AT TIME ZONE 'UTC')::date AS day,
         status, CASE auto_renewal WHEN false THEN 0 WHEN true THEN 1 ELSE 2 END::smallint AS auto_renewal, count(*)::bigint AS n
  FROM contracts GROUP BY 1, 2, 3, 4, 5`;

async function expectCountersEqualRecount() {
  const counters = `SELECT personal, scope_id, day, status, auto_renewal, n FROM contract_updated_counts WHERE n <> 0`;
  expect(await handle.query(`${counters} EXCEPT ALL ${RECOUNT}`)).toEqual([]);
  expect(await handle.query(`${RECOUNT} EXCEPT ALL ${counters}`)).toEqual([]);
}

describe('migration 0009 (contract_updated_counts by status and auto_renewal)', () => {
  it('counts the contracts already there by the new keys, and keeps counting after', async () => {
    await insertMembers(handle.db);
    // 60 contracts under 0008, on three days, every status and auto_renewal, every path.
    const values: string[] = [];
    for (let i = 0; i < 60; i++) {
      const owner = USERS[i % 2]!;
      const org = [null, ORGS[0], ORGS[1]][i % 3];
      const status = CONTRACT_STATUSES[i % CONTRACT_STATUSES.length]!;
      const autoRenewal = [null, true, false][i % 3 === 0 ? 0 : (i % 5) % 2 ? 1 : 2];
      const at = `2027-01-0${1 + (Math.floor(i / 3) % 3)}T${String(i % 24).padStart(2, '0')}:00:00Z`;
      values.push(`('00000000-0000-4000-8000-${String(i + 1).padStart(12, '0')}', '${owner}', ${org ? `'${org}'` : 'NULL'}, 'Upgrade ${i}', '${status}', ${autoRenewal}, 'u.pdf', 1, '${at}')`);
    }
    await handle.query(`INSERT INTO contracts (id, owner_id, organization_id, title, status, auto_renewal, file_name, file_size, updated_at) VALUES ${values.join(', ')}`);
    // Under 0008 the counters have no status: one row per path and day.
    expect(
      await handle.query(`
        SELECT personal, scope_id, day, n FROM contract_updated_counts
        EXCEPT ALL
        SELECT organization_id IS NULL, coalesce(organization_id, owner_id), (updated_at AT TIME ZONE 'UTC')::date, count(*)::bigint FROM contracts GROUP BY 1, 2, 3`),
    ).toEqual([]);
    expect(await handle.query(`SELECT count(*)::int AS n FROM contract_updated_counts`)).toEqual([{ n: 12 }]);

    await migrateDatabase(handle.db, handle.driver);
    await expectCountersEqualRecount();

    const since = '2027-01-02T05:30:00Z';
    for (const scope of scopes) {
      for (const filters of [{ updatedSince: since }, { updatedSince: since, status: 'completed' as const }, { updatedSince: since, autoRenewal: true }, { updatedSince: since, status: 'pending' as const }]) {
        const [row] = await handle.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM contracts
           WHERE ((organization_id IS NULL AND owner_id = $1) OR organization_id = ANY(string_to_array($2, ',')::uuid[]))
             AND updated_at >= $3::timestamptz
             AND ($4::text IS NULL OR status::text = $4)
             AND ($5::boolean IS NULL OR (status = 'completed' AND auto_renewal = $5))`,
          [scope.userId, scope.organizationIds.join(','), since, filters.status ?? null, filters.autoRenewal ?? null],
        );
        expect(await countContracts(handle.db, scope, filters), JSON.stringify({ scope: scope.userId, filters })).toBe(row!.n);
      }
    }

    // After the migration its triggers keep the new keys.
    await handle.query(`UPDATE contracts SET status = 'completed', auto_renewal = true, updated_at = '2027-01-03T12:00:00Z' WHERE status = 'processing'`);
    await handle.query(`DELETE FROM contracts WHERE status = 'failed'`);
    await expectCountersEqualRecount();
  });
});
