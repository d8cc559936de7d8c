import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPostgres, type DatabaseHandle } from '@/db/client';
import { selectContract } from '@/db/queries/contracts/by-id';
import { countContracts } from '@/db/queries/contracts/count';
import { DEFAULT_ORDER } from '@/db/queries/contracts/expressions';
import { selectContractPage } from '@/db/queries/contracts/page';
import { selectMemberships } from '@/db/queries/memberships';
import { DEMO_ORGS, DEMO_USERS, demoContractRows, resetData, seedDemo } from '@/db/seed/demo';
import { SeedStepError, seedScale } from '@/db/seed/scale';
import { CONTRACT_STATUSES } from '@/lib/contracts';
import { walkByCursor } from '../helpers/contract-pages';
import { createTestDatabase, describeDriver, PREPARE } from '../helpers/db';

let handle: DatabaseHandle;
beforeAll(async () => {
  handle = await createTestDatabase();
});
afterAll(async () => handle?.close());

async function snapshot() {
  const tables = ['users', 'organizations', 'memberships', 'contracts', 'access_tokens'];
  const out: Record<string, unknown[]> = {};
  for (const t of tables) out[t] = await handle.query(`select * from ${t} order by 1, 2`);
  return out;
}

async function scopeOf(user: keyof typeof DEMO_USERS) {
  const userId = DEMO_USERS[user].id;
  return { userId, organizationIds: (await selectMemberships(handle.db, userId)).map((o) => o.id) };
}

describe('demo seed', () => {
  it('is idempotent: a second run inserts nothing and changes no row', async () => {
    const first = await seedDemo(handle.db);
    expect(first.inserted).toBeGreaterThan(30);
    const before = await snapshot();
    const second = await seedDemo(handle.db);
    expect(second.inserted).toBe(0);
    expect(await snapshot()).toEqual(before);
  });

  it('after a reset, seeds the same rows again (except password salts)', async () => {
    const before = await snapshot();
    await resetData(handle.db);
    expect((await snapshot()).contracts).toEqual([]);
    await seedDemo(handle.db);
    const after = await snapshot();
    const withoutHashes = (rows: unknown[]) => rows.map((r) => ({ ...(r as object), password_hash: undefined }));
    expect(withoutHashes(after.users!)).toEqual(withoutHashes(before.users!));
    expect(after.contracts).toEqual(before.contracts);
    expect(after.memberships).toEqual(before.memberships);
  });

  it('covers every status, several currencies, null fields and a formula-like title', () => {
    const rows = demoContractRows();
    expect(new Set(rows.map((r) => r.status))).toEqual(new Set(CONTRACT_STATUSES));
    const completed = rows.filter((r) => r.status === 'completed');
    expect(new Set(completed.map((r) => r.currency).filter(Boolean)).size).toBeGreaterThanOrEqual(4);
    expect(completed.some((r) => r.renewalDate === null)).toBe(true);
    expect(rows.filter((r) => r.status !== 'completed').every((r) => r.expirationDate === undefined)).toBe(true);
    expect(rows.some((r) => r.title.startsWith('='))).toBe(true);
  });
});

describe('access query on the demo data', () => {
  const expected = (user: keyof typeof DEMO_USERS, orgs: (keyof typeof DEMO_ORGS)[]) =>
    demoContractRows()
      .filter((c) =>
        c.organizationId
          ? orgs.some((o) => DEMO_ORGS[o].id === c.organizationId)
          : c.ownerId === DEMO_USERS[user].id,
      )
      .sort((a, b) => b.createdAt!.getTime() - a.createdAt!.getTime() || (a.id! < b.id! ? 1 : -1))
      .map((c) => c.id);

  it.each([
    ['alice', ['acme']],
    ['bob', ['acme', 'globex']],
    ['carol', []],
  ] as const)('%s sees exactly their personal contracts plus those of %j, newest first', async (user, orgs) => {
    const scope = await scopeOf(user);
    const page = await selectContractPage(handle.db, scope, {}, { limit: 100 });
    expect(page.map((c) => c.id)).toEqual(expected(user, [...orgs]));
    expect(await countContracts(handle.db, scope, {})).toBe(page.length);
  });

  it('pages through in a stable order with offset and with a cursor', async () => {
    const scope = await scopeOf('bob');
    const all = expected('bob', ['acme', 'globex']);
    const byOffset: string[] = [];
    for (let offset = 0; offset < all.length; offset += 4) {
      byOffset.push(...(await selectContractPage(handle.db, scope, {}, { limit: 4, offset })).map((c) => c.id));
    }
    expect(byOffset).toEqual(all);
    expect(await walkByCursor(handle.db, scope, {}, DEFAULT_ORDER, 3)).toEqual(all);
  });

  it('filters by status and organisation, and hides other tenants in get-one', async () => {
    const alice = await scopeOf('alice');
    const completed = await selectContractPage(handle.db, alice, { status: 'completed' }, { limit: 100 });
    expect(completed.length).toBeGreaterThan(0);
    expect(completed.every((c) => c.status === 'completed')).toBe(true);
    const acmeOnly = await selectContractPage(handle.db, alice, { organizationId: DEMO_ORGS.acme.id }, { limit: 100 });
    expect(acmeOnly.every((c) => c.organizationId === DEMO_ORGS.acme.id)).toBe(true);
    expect(await countContracts(handle.db, alice, { organizationId: DEMO_ORGS.acme.id })).toBe(acmeOnly.length);

    const globexContract = demoContractRows().find((c) => c.organizationId === DEMO_ORGS.globex.id)!;
    expect(await selectContract(handle.db, alice, globexContract.id!)).toBeUndefined();
    expect(await selectContract(handle.db, await scopeOf('bob'), globexContract.id!)).toMatchObject({ id: globexContract.id });
    const bobPersonal = demoContractRows().find((c) => c.ownerId === DEMO_USERS.bob.id && !c.organizationId)!;
    expect(await selectContract(handle.db, alice, bobPersonal.id!)).toBeUndefined();
  });
});

describe('scale seed: progress, no statement timeout, a failure a rerun finishes', () => {
  const N = 3_000;
  // Only the scale seed's contracts (the demo's ids are not made from 'scale-contract:').
  const scaleContracts = async (db: DatabaseHandle) =>
    Number(
      (
        await db.query<{ n: string }>(
          `select count(*) as n from contracts where id in (select overlay(overlay(md5('scale-contract:' || i) placing '4' from 13) placing '8' from 17)::uuid from generate_series(1, ${N}) i)`,
        )
      )[0]!.n,
    );
  const indexes = async (db: DatabaseHandle) =>
    (await db.query<{ name: string }>(`select indexname as name from pg_indexes where tablename = 'contracts' order by 1`)).map((r) => r.name);

  // The seed's own connection: one session, under a 1 ms statement timeout (the app's
  // request bound, as a role or a startup parameter would carry it; behind a pooler,
  // DATABASE_PREPARE=false, also SET LOCAL at each transaction's start). Every index build
  // and VACUUM ANALYZE takes longer than 1 ms. The timeout is set once the connection is
  // open: postgres.js's own type lookup at connect would otherwise be cancelled.
  let seedDb: DatabaseHandle;
  beforeAll(async () => {
    const url = (handle as DatabaseHandle & { url?: string }).url;
    if (!url) {
      seedDb = handle;
      return;
    }
    seedDb = await openPostgres(url, { max: 1, prepare: PREPARE, statementTimeoutMs: PREPARE ? undefined : 1 });
    await seedDb.query('select 1');
    await seedDb.query('SET statement_timeout = 1');
  });
  afterAll(async () => {
    if (seedDb && seedDb !== handle) await seedDb.close();
  });

  it('a failing step is named, rolls the load back whole (indexes kept), and a rerun completes it', async () => {
    const indexesBefore = await indexes(handle);
    expect(indexesBefore.length).toBeGreaterThan(10);
    // A row the load cannot write: contract number 2,500 (past the first chunks of 1,000).
    await handle.query(`ALTER TABLE contracts ADD CONSTRAINT seed_test_refuses CHECK (file_name <> 'contract-2500.pdf') NOT VALID`);
    const failed = await seedScale(seedDb.db, N, { chunkRows: 1_000 }).catch((error: unknown) => error);
    expect(failed).toBeInstanceOf(SeedStepError);
    // The step names the INSERT whose rows hold number 2,500.
    const [, from, to] = /^contracts: inserting rows (\d+) to (\d+)$/.exec((failed as SeedStepError).step) ?? [];
    expect(Number(from)).toBeLessThanOrEqual(2_500);
    expect(Number(to)).toBeGreaterThanOrEqual(2_500);
    expect((failed as Error).message).toContain('seed_test_refuses');
    expect(await scaleContracts(handle)).toBe(0);
    expect(await indexes(handle)).toEqual(indexesBefore);

    await handle.query(`ALTER TABLE contracts DROP CONSTRAINT seed_test_refuses`);
    const lines: string[] = [];
    const plan = await seedScale(seedDb.db, N, { chunkRows: 1_000, progressEveryMs: 20, onProgress: (line) => lines.push(line) });
    expect(await scaleContracts(handle)).toBe(N);
    expect(await indexes(handle)).toEqual(indexesBefore);
    // The index builds lifted the table's parallel_workers (migration 0016) for themselves only.
    const [table] = await handle.query<{ options: string[] | null }>(`select reloptions as options from pg_class where oid = 'contracts'::regclass`);
    expect(table!.options).toEqual(['parallel_workers=0']);
    // The heavy caller's contracts, as the plan says.
    const [heavy] = await handle.query<{ n: string }>(
      `select count(*) as n from contracts c join users u on u.id = c.owner_id where u.email = 'heavy@scale.example.com'`,
    );
    expect(Number(heavy!.n)).toBe(plan.heavyPersonal + plan.heavyOrgs * plan.heavyOrgSize);
    // Renewal dates years in the past, and the evergreen ones rolled forward as the job would:
    // none is left before today for the lists to read by the rule.
    const [renewals] = await handle.query<{ past: string; rolled: string; stale: string }>(
      `select count(*) filter (where status = 'completed' and renewal_date < (now() at time zone 'UTC')::date - 365) as past,
              count(*) filter (where next_renewal_date > renewal_date) as rolled,
              count(*) filter (where status = 'completed' and auto_renewal and renewal_term is not null and next_renewal_date < (now() at time zone 'UTC')::date) as stale
       from contracts`,
    );
    expect(Number(renewals!.past)).toBeGreaterThan(N / 50);
    expect(Number(renewals!.rolled)).toBeGreaterThan(N / 50);
    expect(Number(renewals!.stale)).toBe(0);
    // Progress: the rows written, the step under way and the time since the start.
    const inserting = lines.map((l) => /^\[\d+\.\d s\] contracts: inserting rows (\d+) to \d+; contracts written: ([\d,]+) of 3,000$/.exec(l)).filter((m) => m !== null);
    // Each chunk reports the rows written before it.
    expect(inserting.length).toBeGreaterThan(5);
    expect(inserting.every(([, from, written]) => Number(from) - 1 === Number(written!.replace(/,/g, '')))).toBe(true);
    expect(lines.some((l) => /contracts: building index \d+ of \d+ \(contracts_/.test(l))).toBe(true);
    expect(lines.some((l) => /VACUUM ANALYZE contracts; contracts written: 3,000 of 3,000/.test(l))).toBe(true);
    expect(lines.at(-1)).toMatch(/^\[\d+\.\d s\] done$/);
    if (describeDriver() === 'postgres') {
      // VACUUM ANALYZE ran to the end under the 1 ms timeout: the table has fresh statistics.
      const [stats] = await handle.query<{ vacuumed: boolean; analyzed: boolean }>(
        `select last_vacuum is not null as vacuumed, last_analyze is not null as analyzed from pg_stat_user_tables where relname = 'contracts'`,
      );
      expect(stats).toEqual({ vacuumed: true, analyzed: true });
    }
  }, 120_000);

  it('a rerun of a completed seed skips the load and only refreshes the statistics', async () => {
    const lines: string[] = [];
    await seedScale(seedDb.db, N, { onProgress: (line) => lines.push(line) });
    expect(lines.some((l) => l.includes('contracts already loaded by an earlier run'))).toBe(true);
    expect(lines.some((l) => l.includes('inserting rows'))).toBe(false);
    expect(await scaleContracts(handle)).toBe(N);
  }, 60_000);
});
