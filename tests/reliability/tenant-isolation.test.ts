import { and, eq, sql } from 'drizzle-orm';
import fc from 'fast-check';
import Papa from 'papaparse';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '@/db/client';
import { setProcessDatabase } from '@/server/database';
import { contracts, memberships, organizations, users } from '@/db/schema';
import { CONTRACT_STATUSES } from '@/lib/contracts';
import { createTestDatabase } from '../helpers/db';
import { type Answer, apiRequest, PROXY_CLIENT_ADDRESS, send } from '../helpers/api';
import { newApiKey, revokeApiKey } from '../helpers/tokens';
import { listOrder, type ModelContract } from './support/world';
import { configureForFile } from '../helpers/config';

/**
 * Tenant isolation as a property. Random users, organisations, memberships and
 * contracts; for every caller, the list (every page), get-one (every contract id in the
 * database) and the export return exactly the contracts the caller may see: their
 * personal contracts and those of their organisations. A contract the caller may not see
 * answers exactly like an id that does not exist, and an organisation they are not in
 * exactly like one that does not exist. Removing a membership or revoking a key takes
 * effect on the very next request.
 */

configureForFile({ ...PROXY_CLIENT_ADDRESS, RATE_LIMIT_GENERAL_PER_WINDOW: '1000000', RATE_LIMIT_EXPORT_PER_WINDOW: '1000000', RATE_LIMIT_AUTH_FAILURES_PER_MINUTE: '1000000' });

const SEED = Number(process.env.FUZZ_SEED ?? 4242);
const RUNS = Number(process.env.FUZZ_RUNS ?? 15);
const NOWHERE = '00000000-0000-4000-8000-000000000000';

interface Plan {
  users: number;
  orgs: number;
  memberships: [number, number][];
  contracts: { owner: number; org: number | null; status: (typeof CONTRACT_STATUSES)[number]; tick: number }[];
  pageSize: number;
  revoke: number;
  remove: number;
}

const planArb: fc.Arbitrary<Plan> = fc
  .record({ users: fc.integer({ min: 2, max: 5 }), orgs: fc.integer({ min: 0, max: 3 }) })
  .chain(({ users, orgs }) => {
    const pairs: [number, number][] = [];
    for (let u = 0; u < users; u++) for (let o = 0; o < orgs; o++) pairs.push([u, o]);
    return fc.record({
      users: fc.constant(users),
      orgs: fc.constant(orgs),
      memberships: fc.subarray(pairs),
      contracts: fc.array(
        fc.record({
          owner: fc.nat(users - 1),
          org: orgs === 0 ? fc.constant(null) : fc.option(fc.nat(orgs - 1), { freq: 2 }),
          status: fc.constantFrom(...CONTRACT_STATUSES),
          tick: fc.nat(4), // few distinct instants: many ties, broken by id
        }),
        { maxLength: 18 },
      ),
      pageSize: fc.integer({ min: 2, max: 7 }),
      revoke: fc.nat(users - 1),
      remove: fc.nat(),
    });
  });

let handle: DatabaseHandle;
beforeAll(async () => {
  handle = await createTestDatabase();
  setProcessDatabase(handle);
});
afterAll(async () => handle?.close());

interface Built {
  userIds: string[];
  orgIds: string[];
  keys: string[];
  rows: Pick<ModelContract, 'id' | 'ownerId' | 'organizationId' | 'status' | 'createdAt'>[];
  members: [string, string][];
}

async function build(plan: Plan, run: number): Promise<Built> {
  await handle.db.execute(sql`TRUNCATE users, organizations RESTART IDENTITY CASCADE`);
  const userRows = await handle.db
    .insert(users)
    .values(Array.from({ length: plan.users }, (_, i) => ({ email: `u${i}.r${run}@isolation.example` })))
    .returning({ id: users.id });
  const userIds = userRows.map((r) => r.id);
  const orgIds =
    plan.orgs === 0
      ? []
      : (await handle.db.insert(organizations).values(Array.from({ length: plan.orgs }, (_, i) => ({ name: `Org ${i}` }))).returning({ id: organizations.id })).map((r) => r.id);
  const members = plan.memberships.map(([u, o]) => [userIds[u]!, orgIds[o]!] as [string, string]);
  if (members.length > 0) await handle.db.insert(memberships).values(members.map(([userId, organizationId]) => ({ userId, organizationId })));
  const base = Date.UTC(2026, 0, 1);
  const rows =
    plan.contracts.length === 0
      ? []
      : await handle.db
          .insert(contracts)
          .values(
            plan.contracts.map((c, i) => ({
              ownerId: userIds[c.owner]!,
              organizationId: c.org === null ? null : orgIds[c.org]!,
              title: `Contract ${i}`,
              status: c.status,
              fileName: `c${i}.pdf`,
              fileSize: i,
              createdAt: new Date(base + c.tick * 1000),
            })),
          )
          .returning({ id: contracts.id, ownerId: contracts.ownerId, organizationId: contracts.organizationId, status: contracts.status, createdAt: contracts.createdAt });
  const keys: string[] = [];
  for (const id of userIds) keys.push((await newApiKey(handle.db, id, { name: 'isolation' })).key);
  return { userIds, orgIds, keys, rows, members };
}

const orgsOf = (b: Built, userId: string) => b.members.filter(([u]) => u === userId).map(([, o]) => o);
const visible = (b: Built, userId: string) =>
  b.rows.filter((c) => (c.organizationId === null ? c.ownerId === userId : orgsOf(b, userId).includes(c.organizationId))).sort(listOrder);

/** An answer without what differs between any two requests. */
function comparable(a: Answer) {
  const headers = Object.fromEntries(
    [...a.headers].filter(([name]) => !['x-request-id', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'ratelimit'].includes(name)),
  );
  return { status: a.status, headers, body: { ...(a.json as object), request_id: undefined } };
}

async function listAll(key: string, pageSize: number, query = ''): Promise<{ ids: string[]; totals: Set<number> }> {
  const ids: string[] = [];
  const totals = new Set<number>();
  for (let offset = 0; ; offset += pageSize) {
    const answer = await send(apiRequest('GET', `/contracts?limit=${pageSize}&offset=${offset}${query}`, { key }));
    expect(answer.status, answer.text).toBe(200);
    const data = (answer.json as { data: { contracts: { id: string }[]; pagination: { total: number } } }).data;
    totals.add(data.pagination.total);
    ids.push(...data.contracts.map((c) => c.id));
    if (data.contracts.length < pageSize) return { ids, totals };
  }
}

async function exported(key: string, body = ''): Promise<string[]> {
  const answer = await send(apiRequest('POST', '/contracts/export', { key, body }));
  expect(answer.status, answer.text).toBe(200);
  return Papa.parse<string[]>(answer.text.trimEnd(), { skipEmptyLines: false }).data.slice(1).map((r) => r[0]!);
}

/** Everything one caller can reach answers exactly their contracts. */
async function checkCaller(b: Built, plan: Plan, u: number) {
  const userId = b.userIds[u]!;
  const key = b.keys[u]!;
  const expected = visible(b, userId).map((c) => c.id);

  const all = await listAll(key, plan.pageSize);
  expect(all.ids).toEqual(expected);
  expect([...all.totals]).toEqual([expected.length]);
  expect(await exported(key)).toEqual(expected);

  // Every contract in the database: 200 when visible, otherwise the very answer of an id that does not exist.
  const missing = comparable(await send(apiRequest('GET', `/contracts/${NOWHERE}`, { key })));
  expect(missing.status).toBe(404);
  const answers = await Promise.all(b.rows.map((c) => send(apiRequest('GET', `/contracts/${c.id}`, { key }))));
  b.rows.forEach((c, i) => {
    const answer = answers[i]!;
    if (expected.includes(c.id)) {
      expect(answer.status).toBe(200);
      expect((answer.json as { data: { contract: { id: string } } }).data.contract.id).toBe(c.id);
    } else {
      expect(comparable(answer)).toEqual(missing);
    }
  });

  // Every organisation: the caller's answers its contracts; any other answers like one that does not exist.
  const outsider = comparable(await send(apiRequest('GET', `/contracts?organization_id=${NOWHERE}`, { key })));
  const outsiderExport = comparable(await send(apiRequest('POST', '/contracts/export', { key, body: `{"organization_id":"${NOWHERE}"}` })));
  expect(outsider.status).toBe(403);
  for (const orgId of b.orgIds) {
    if (orgsOf(b, userId).includes(orgId)) {
      const inOrg = expected.filter((id) => b.rows.find((c) => c.id === id)!.organizationId === orgId);
      expect((await listAll(key, 100, `&organization_id=${orgId}`)).ids).toEqual(inOrg);
      expect(await exported(key, `{"organization_id":"${orgId}"}`)).toEqual(inOrg);
    } else {
      expect(comparable(await send(apiRequest('GET', `/contracts?organization_id=${orgId}`, { key })))).toEqual(outsider);
      expect(comparable(await send(apiRequest('POST', '/contracts/export', { key, body: `{"organization_id":"${orgId}"}` })))).toEqual(outsiderExport);
    }
  }
}

describe('tenant isolation', () => {
  it(`list, get and export return exactly the accessible set, for every caller (${RUNS} random worlds, seed ${SEED})`, async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(planArb, async (plan) => {
        const b = await build(plan, run++);
        for (let u = 0; u < plan.users; u++) await checkCaller(b, plan, u);

        // A membership removed: gone on the very next request of that member.
        if (b.members.length > 0) {
          const [userId, orgId] = b.members[plan.remove % b.members.length]!;
          await handle.db.delete(memberships).where(and(eq(memberships.userId, userId), eq(memberships.organizationId, orgId)));
          b.members = b.members.filter(([u, o]) => !(u === userId && o === orgId));
          const u = b.userIds.indexOf(userId);
          await checkCaller(b, plan, u);
        }

        // A key revoked: refused on the very next request, for every operation.
        const revoked = b.keys[plan.revoke]!;
        const [{ id: keyId }] = (await handle.query<{ id: string }>("SELECT id FROM access_tokens WHERE kind = 'api_key' AND user_id = $1", [b.userIds[plan.revoke]])) as [{ id: string }];
        expect((await send(apiRequest('GET', '/contracts', { key: revoked }))).status).toBe(200);
        await revokeApiKey(handle.db, b.userIds[plan.revoke]!, keyId);
        for (const req of [
          apiRequest('GET', '/contracts', { key: revoked }),
          apiRequest('GET', `/contracts/${b.rows[0]?.id ?? NOWHERE}`, { key: revoked }),
          apiRequest('POST', '/contracts/export', { key: revoked }),
        ]) {
          expect((await send(req)).status).toBe(401);
        }
      }),
      { seed: SEED, numRuns: RUNS },
    );
  }, 120_000);
});
