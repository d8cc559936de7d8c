import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '@/db/client';
import { selectContract } from '@/db/queries/contracts/by-id';
import { countContracts } from '@/db/queries/contracts/count';
import { selectContractPage, type Cursor } from '@/db/queries/contracts/page';
import { selectMemberships } from '@/db/queries/memberships';
import { DEMO_ORGS, DEMO_USERS, demoContractRows, resetData, seedDemo } from '@/db/seed/demo';
import { CONTRACT_STATUSES } from '@/lib/contracts';
import { createTestDatabase } from '../helpers/db';

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
    const byCursor: string[] = [];
    let after: Cursor | undefined;
    for (;;) {
      const page = await selectContractPage(handle.db, scope, {}, { limit: 3, after });
      if (page.length === 0) break;
      byCursor.push(...page.map((c) => c.id));
      const last = page[page.length - 1]!;
      after = { key: last.sortKeyText, id: last.id };
    }
    expect(byCursor).toEqual(all);
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
