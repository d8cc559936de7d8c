import fc from 'fast-check';
import { eq, inArray, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { executeRows, type Database, type DatabaseHandle } from '@/db/client';
import { contractCountStatement, countContracts } from '@/db/queries/contracts/count';
import type { ContractFilters } from '@/db/queries/contracts/filters';
import { contracts, type NewContract } from '@/db/schema';
import { CONTRACT_STATUSES } from '@/lib/contracts';
import { createTestDatabase } from '../helpers/db';
import { twoMembers } from '../helpers/two-members';

/**
 * The total of updated_since, alone or with a status or auto_renewal, comes from the
 * per-day counters of updated_at (migrations 0008, 0009) plus an index count of since's
 * own day: after random inserts, updates (updated_at moved within a day or to another,
 * owner, organisation, status and auto_renewal changed, several rows by one statement),
 * deletes, a rolled-back write and a TRUNCATE, written under several session time zones,
 * the total equals a plain count of the rows for every `since` tried: each instant of the
 * data, every UTC midnight around it and a millisecond either side, times within a day,
 * with offsets. The counters themselves also equal a recount by day, status and
 * auto_renewal.
 */

let handle: DatabaseHandle;
const { USERS, ORGS, scopes, insert: insertMembers } = twoMembers('d', 'updated');

beforeAll(async () => {
  handle = await createTestDatabase();
  await insertMembers(handle.db);
});
afterAll(async () => handle?.close());

const DAY_MS = 86_400_000;
const MIDNIGHTS = ['2027-01-01', '2027-01-02', '2027-01-03', '2027-01-05'].map((d) => Date.parse(`${d}T00:00:00Z`));
/** Instants at, just before and just after UTC midnights, and within days. */
const INSTANTS = MIDNIGHTS.flatMap((m) => [m, m - 1, m + 1, m + 3_600_000, m + DAY_MS - 1, m + 13 * 3_600_000 + 123]);
/** Session time zones for writes and counts: the day is updated_at's UTC day whatever they are. */
const ZONES = ['UTC', '+14', '-12', 'America/New_York'];

/** Every `since` worth trying for the instants present: each, midnights around it, ± 1 ms, offsets. */
function sinceValues(instants: number[]): string[] {
  const out = new Set<number>([0, Date.parse('2030-01-01T00:00:00Z')]);
  for (const at of instants) {
    const midnight = Math.floor(at / DAY_MS) * DAY_MS;
    for (const t of [at, at - 1, at + 1, midnight, midnight - 1, midnight + 1, midnight + DAY_MS, midnight + DAY_MS - 1, midnight + 7_200_000]) out.add(t);
  }
  const values: string[] = [];
  for (const t of out) {
    values.push(new Date(t).toISOString());
    // The same instant written with an offset: since's UTC day is not the day it reads as.
    const plus = new Date(t + 5 * 3_600_000).toISOString().replace('Z', '+05:00');
    const minus = new Date(t - 11 * 3_600_000).toISOString().replace('Z', '-11:00');
    values.push(plus, minus);
  }
  // Sub-millisecond: just after an instant of the data; and seven decimals that Postgres
  // rounds (to microseconds) up into the next day.
  if (instants[0] !== undefined) values.push(new Date(instants[0]).toISOString().replace('Z', '').concat('001+00:00'));
  for (const midnight of MIDNIGHTS) values.push(new Date(midnight - 1000).toISOString().replace('.000Z', '.9999999Z'));
  return values;
}

async function withZone<T>(zone: string, f: (db: Database) => Promise<T>): Promise<T> {
  return handle.db.transaction(async (tx) => {
    await tx.execute(sql`SELECT set_config('TimeZone', ${zone}, true)`);
    return f(tx as unknown as Database);
  });
}

type Scope = (typeof scopes)[number];

/**
 * The rows counted one by one, from the API's rules (auto_renewal is shown, and matched, only
 * once completed): one plain count per case, all of them in one statement (a statement per
 * case cost this file half its time).
 */
async function plainCounts(db: Database, cases: { scope: Scope; filters: ContractFilters }[]): Promise<number[]> {
  const rows = cases.map(({ scope, filters }, i) => ({
    i,
    personal: filters.organizationId === undefined,
    owner: scope.userId,
    orgs: filters.organizationId ? [filters.organizationId] : scope.organizationIds,
    since: filters.updatedSince,
    status: filters.status ?? null,
    auto: filters.autoRenewal ?? null,
  }));
  const counted = await executeRows<{ i: number; n: number }>(db, sql`
    SELECT c.i, (SELECT count(*)::int FROM contracts
      WHERE ((c.personal AND organization_id IS NULL AND owner_id = c.owner) OR organization_id = ANY(c.orgs))
        AND updated_at >= c.since
        AND (c.status IS NULL OR status::text = c.status)
        AND (c.auto IS NULL OR (status = 'completed' AND auto_renewal IS NOT DISTINCT FROM c.auto))) AS n
    FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) AS c(i int, personal boolean, owner uuid, orgs uuid[], since timestamptz, status text, auto boolean)
    ORDER BY c.i`);
  return counted.map((r) => Number(r.n));
}

/** What the total is checked with besides updated_since and the organisation: each since takes the next. */
const OTHER_FILTERS: ContractFilters[] = [
  {},
  ...CONTRACT_STATUSES.map((status) => ({ status })),
  { autoRenewal: true },
  { autoRenewal: false },
  { status: 'completed', autoRenewal: true },
];

/** The counters against a recount of the rows by path, UTC day, status and auto_renewal (zero rows may remain). */
async function expectCountersEqualRecount() {
  const recount = `
    SELECT organization_id IS NULL AS personal, coalesce(organization_id, owner_id) AS scope_id, (updated_at AT TIME ZONE 'UTC')::date AS day,
           status, CASE auto_renewal WHEN false THEN 0 WHEN true THEN 1 ELSE 2 END::smallint AS auto_renewal, count(*)::bigint AS n
    FROM contracts GROUP BY 1, 2, 3, 4, 5`;
  const rows = await handle.query<{ scope_id: string }>(`
    SELECT personal, scope_id, day, status, auto_renewal, n FROM contract_updated_counts WHERE n <> 0
    EXCEPT ALL ${recount}`);
  const missing = await handle.query<{ scope_id: string }>(`
    ${recount}
    EXCEPT ALL
    SELECT personal, scope_id, day, status, auto_renewal, n FROM contract_updated_counts`);
  expect(rows).toEqual([]);
  expect(missing).toEqual([]);
}

async function expectTotalsMatchRows(zone: string) {
  await expectCountersEqualRecount();
  const instants = (await handle.query<{ at: string }>(`SELECT to_char(updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS at FROM contracts`)).map((r) =>
    Date.parse(r.at),
  );
  await withZone(zone, async (db) => {
    const cases: { scope: Scope; filters: ContractFilters }[] = [];
    for (const [i, since] of sinceValues(instants).entries()) {
      const other = OTHER_FILTERS[i % OTHER_FILTERS.length]!;
      for (const scope of scopes) {
        for (const base of [{ updatedSince: since }, ...scope.organizationIds.map((organizationId) => ({ updatedSince: since, organizationId }))]) {
          cases.push({ scope, filters: { ...base, ...other } });
        }
      }
    }
    const expected = await plainCounts(db, cases);
    for (const [i, { scope, filters }] of cases.entries()) {
      expect(contractCountStatement(scope, filters)!.name).toMatch(/^contracts\.count updated-counters /);
      expect(await countContracts(db, scope, filters), JSON.stringify({ zone, scope: scope.userId, filters })).toBe(expected[i]);
    }
  });
}

const contractArb = fc.record({
  owner: fc.constantFrom(0, 1),
  org: fc.constantFrom(null, 0, 1),
  status: fc.constantFrom(...CONTRACT_STATUSES),
  autoRenewal: fc.constantFrom(null, true, false),
  updatedAt: fc.constantFrom(...INSTANTS),
});
type Generated = typeof contractArb extends fc.Arbitrary<infer T> ? T : never;
let serial = 0;
const toRow = (c: Generated): NewContract => ({
  id: `00000000-0000-4000-8000-${String(++serial).padStart(12, '0')}`,
  ownerId: USERS[c.owner]!,
  organizationId: c.org === null ? null : ORGS[c.org]!,
  title: 'Updated',
  status: c.status,
  autoRenewal: c.autoRenewal,
  fileName: 'u.pdf',
  fileSize: 1,
  updatedAt: new Date(c.updatedAt),
});

/** One write: an update of some fields of one contract, a multi-row update, an insert or a delete. */
const writeArb = fc.oneof(
  fc.record({ kind: fc.constant('update' as const), pick: fc.nat(), at: fc.option(fc.constantFrom(...INSTANTS), { nil: undefined }), owner: fc.option(fc.constantFrom(0, 1), { nil: undefined }), org: fc.option(fc.constantFrom(null, 0, 1), { nil: undefined }), status: fc.option(fc.constantFrom(...CONTRACT_STATUSES), { nil: undefined }), autoRenewal: fc.option(fc.constantFrom(null, true, false), { nil: undefined }) }),
  fc.record({ kind: fc.constant('touch-org' as const), org: fc.constantFrom(0, 1), at: fc.constantFrom(...INSTANTS), moveTo: fc.constantFrom(null, 0, 1) }),
  fc.record({ kind: fc.constant('insert' as const), rows: fc.array(contractArb, { minLength: 1, maxLength: 3 }) }),
  fc.record({ kind: fc.constant('delete' as const), pick: fc.nat() }),
);

describe('the updated_since total', () => {
  it('equals a plain count of the rows for every since, after any writes', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(contractArb, { minLength: 1, maxLength: 15 }),
        fc.array(writeArb, { maxLength: 10 }),
        fc.constantFrom(...ZONES),
        fc.constantFrom(...ZONES),
        async (initial, writes, writeZone, countZone) => {
          await handle.db.delete(contracts).where(inArray(contracts.ownerId, USERS));
          const ids = initial.map(toRow).map((r) => r.id!);
          await withZone(writeZone, async (db) => {
            await db.insert(contracts).values(initial.map((c, i) => ({ ...toRow(c), id: ids[i]! })));
            for (const w of writes) {
              if (w.kind === 'insert') {
                const rows = w.rows.map(toRow);
                await db.insert(contracts).values(rows);
                ids.push(...rows.map((r) => r.id!));
              } else if (w.kind === 'delete') {
                if (ids.length > 0) await db.delete(contracts).where(eq(contracts.id, ids.splice(w.pick % ids.length, 1)[0]!));
              } else if (w.kind === 'update') {
                if (ids.length === 0) continue;
                const set: Partial<NewContract> = { title: 'Updated again' };
                if (w.at !== undefined) set.updatedAt = new Date(w.at);
                if (w.owner !== undefined) set.ownerId = USERS[w.owner]!;
                if (w.org !== undefined) set.organizationId = w.org === null ? null : ORGS[w.org]!;
                if (w.status !== undefined) set.status = w.status;
                if (w.autoRenewal !== undefined) set.autoRenewal = w.autoRenewal;
                await db.update(contracts).set(set).where(eq(contracts.id, ids[w.pick % ids.length]!));
              } else {
                // Many rows by one statement, to one day and perhaps another organisation.
                await db
                  .update(contracts)
                  .set({ updatedAt: new Date(w.at), organizationId: w.moveTo === null ? null : ORGS[w.moveTo]! })
                  .where(eq(contracts.organizationId, ORGS[w.org]!));
              }
            }
          });
          await expectTotalsMatchRows(countZone);
        },
      ),
      { numRuns: 20, seed: 20261126 },
    );
  }, 300_000);

  it('counts nothing of a rolled-back write, and starts again from zero after TRUNCATE', async () => {
    const scope = scopes[0]!;
    await handle.db.delete(contracts).where(inArray(contracts.ownerId, USERS));
    await handle.db.insert(contracts).values([0, 1, 2].map((i) => toRow({ owner: 0, org: null, status: 'pending', autoRenewal: null, updatedAt: INSTANTS[i * 6]! })));
    const since = { updatedSince: new Date(INSTANTS[0]!).toISOString() };
    const before = await countContracts(handle.db, scope, since);
    expect(before).toBe(3);
    await expect(
      handle.db.transaction(async (tx) => {
        await tx.insert(contracts).values(toRow({ owner: 0, org: 0, status: 'completed', autoRenewal: true, updatedAt: INSTANTS[20]! }));
        await tx.update(contracts).set({ updatedAt: new Date(INSTANTS[1]!) }).where(eq(contracts.ownerId, USERS[0]!));
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    expect(await countContracts(handle.db, scope, since)).toBe(before);
    await expectTotalsMatchRows('UTC');

    await handle.db.execute(sql`TRUNCATE contracts CASCADE`);
    await expectCountersEqualRecount();
    expect(await handle.query('SELECT * FROM contract_updated_counts')).toEqual([]);
    expect(await countContracts(handle.db, scope, since)).toBe(0);
    await handle.db.insert(contracts).values(toRow({ owner: 0, org: 1, status: 'completed', autoRenewal: false, updatedAt: INSTANTS[7]! }));
    await expectTotalsMatchRows('+14');
  });
});
