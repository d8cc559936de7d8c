import fc from 'fast-check';
import { desc, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { executeRows, runStatement, type DatabaseHandle } from '@/db/client';
import { currentEventPosition, selectEventPage } from '@/db/queries/events';
import { accessibleTo, accessPaths, accessPathValues, accessShape, accessShapeName, accessValues, countPaths, countPathValues, endpointMaySee, type CallerScope } from '@/db/queries/access';
import { countContracts } from '@/db/queries/contracts/count';
import { readFigures } from '@/db/queries/contracts/figures';
import { filterShape } from '@/db/queries/contracts/filters';
import { accessTokens, contracts, memberships, organizations, tokenOrganizationRemovals, users, webhookEndpoints } from '@/db/schema';
import { loadEndpointScope, loadTokenScope } from '@/server/access/scope';
import { listContractsPage } from '@/server/contracts/list';
import { listContractsInput } from '@/server/contracts/schemas';
import { CONTRACT_STATUSES } from '@/lib/contracts';
import { createTestDatabase } from '../helpers/db';

/**
 * "Which contracts may this caller see" is written in several forms: the scope a token or
 * a webhook endpoint is read with (db/queries/token-scope.ts), the predicate of one
 * statement (accessibleTo), the list's access paths (accessPaths), the count's paths
 * (countPaths), the counters' keys behind a total and behind the plan's figures (the
 * triggers of migrations 0007 to 0009, read through counterPaths and counterPathKeys), the
 * list itself, whole and filtered to each organisation (accessShape, scopeReaches), and the
 * webhook fan-out turned around (endpointMaySee). On generated
 * populations of people, organisations (with and without their members' keys allowed),
 * memberships, personal and organisation keys (restricted or not, with access removed by
 * organisations), webhook endpoints and contracts, every form gives what the rule of
 * docs/keys.md gives, written here once more in plain TypeScript.
 */

let handle: DatabaseHandle;
beforeAll(async () => {
  handle = await createTestDatabase();
});
afterAll(async () => handle?.close());

const USERS = 3;
const ORGS = 3;
const uuid = (kind: number, i: number) => `00000000-0000-4000-8000-${String(kind).padStart(4, '0')}${String(i).padStart(8, '0')}`;
const userId = (i: number) => uuid(1, i);
const orgId = (i: number) => uuid(2, i);

/** What a member's key or endpoint was given: everything, or personal and/or some organisations. */
const accessArb = fc.record({ all: fc.boolean(), personal: fc.boolean(), orgs: fc.subarray([0, 1, 2]) });
const populationArb = fc.record({
  membersKeysAllowed: fc.array(fc.boolean(), { minLength: ORGS, maxLength: ORGS }),
  memberships: fc.subarray(Array.from({ length: USERS * ORGS }, (_, i) => ({ user: Math.floor(i / ORGS), org: i % ORGS }))),
  keys: fc.array(fc.record({ owner: fc.oneof(fc.record({ user: fc.nat(USERS - 1) }), fc.record({ org: fc.nat(ORGS - 1) })), access: accessArb, removed: fc.subarray([0, 1, 2]) }), { maxLength: 5 }),
  endpoints: fc.array(fc.record({ user: fc.nat(USERS - 1), access: accessArb }), { maxLength: 3 }),
  contracts: fc.array(fc.record({ owner: fc.nat(USERS - 1), org: fc.option(fc.nat(ORGS - 1), { nil: null }), status: fc.constantFrom(...CONTRACT_STATUSES) }), { maxLength: 14 }),
});
type Population = typeof populationArb extends fc.Arbitrary<infer T> ? T : never;
type Access = Population['keys'][number]['access'];

// The rule (docs/keys.md), written once more ------------------------------------------------

/** The organisations a member's key or endpoint reaches: its owner's, whose policy allows members' keys, in its access, not removed. */
function memberReach(p: Population, user: number, access: Access, removed: readonly number[] = []): { personal: boolean; orgs: number[] } {
  const orgs = p.memberships
    .filter((m) => m.user === user && p.membersKeysAllowed[m.org] && (access.all || access.orgs.includes(m.org)) && !removed.includes(m.org))
    .map((m) => m.org);
  return { personal: access.all || access.personal, orgs: orgs.sort() };
}

function keyReach(p: Population, key: Population['keys'][number]): { user?: number; personal: boolean; orgs: number[] } {
  // An organisation's own key reaches that organisation alone, whatever its policy says of members' keys.
  if ('org' in key.owner) return { personal: false, orgs: [key.owner.org] };
  return { user: key.owner.user, ...memberReach(p, key.owner.user, key.access, key.removed) };
}

/** The contracts a reach sees, by index. */
const seen = (p: Population, reach: { user?: number; personal: boolean; orgs: number[] }) =>
  p.contracts.flatMap((c, i) => ((c.org === null ? reach.personal && c.owner === reach.user : reach.orgs.includes(c.org)) ? [i] : []));

// The population in the database ----------------------------------------------------------

const contractId = (i: number) => uuid(3, i);
const keyId = (i: number) => uuid(4, i);
const endpointId = (i: number) => uuid(5, i);

async function insert(p: Population) {
  const db = handle.db;
  await db.execute(sql`TRUNCATE users, organizations, contracts, webhook_events CASCADE`);
  await db.insert(users).values(Array.from({ length: USERS }, (_, i) => ({ id: userId(i), email: `agreement-${i}@example.com` })));
  await db.insert(organizations).values(p.membersKeysAllowed.map((allowed, i) => ({ id: orgId(i), name: `Org ${i}`, memberKeysAllowed: allowed })));
  if (p.memberships.length > 0) await db.insert(memberships).values(p.memberships.map((m) => ({ userId: userId(m.user), organizationId: orgId(m.org) })));
  const restricted = (a: Access) => ({ accessAll: a.all, accessPersonal: a.personal, accessOrganizationIds: a.orgs.map(orgId) });
  for (const [i, key] of p.keys.entries()) {
    const owner = 'org' in key.owner ? { organizationId: orgId(key.owner.org), createdBy: userId(0) } : { userId: userId(key.owner.user), ...restricted(key.access) };
    await db.insert(accessTokens).values({ id: keyId(i), kind: 'api_key', name: `key ${i}`, tokenHash: keyId(i).replaceAll('-', '').padEnd(64, '0'), hint: 'cdapi_…', ...owner });
    if ('user' in key.owner && key.removed.length > 0) {
      await db.insert(tokenOrganizationRemovals).values(key.removed.map((org) => ({ tokenId: keyId(i), organizationId: orgId(org) })));
    }
  }
  for (const [i, e] of p.endpoints.entries()) {
    await db.insert(webhookEndpoints).values({
      id: endpointId(i),
      userId: userId(e.user),
      url: 'https://hooks.example.com/',
      eventTypes: ['contract.updated'],
      renewalOffsets: [],
      secretCiphertext: 'x',
      secretHint: 'whsec_…',
      ...restricted(e.access),
    });
  }
  if (p.contracts.length > 0) {
    await db.insert(contracts).values(
      p.contracts.map((c, i) => ({ id: contractId(i), ownerId: userId(c.owner), organizationId: c.org === null ? null : orgId(c.org), title: `C${i}`, status: c.status, fileName: 'c.pdf', fileSize: 1 })),
    );
  }
}

// The forms ---------------------------------------------------------------------------------

const ids = (indexes: number[]) => indexes.map(contractId).sort();
const sorted = (xs: readonly string[]) => [...xs].sort();

/** The one predicate (accessibleTo) of a scope. */
async function byPredicate(scope: CallerScope): Promise<string[]> {
  const rows = await runStatement(handle.db, {
    name: 'agreement.predicate',
    build: (db) => db.select({ id: contracts.id }).from(contracts).where(accessibleTo()).orderBy(desc(contracts.id)),
    values: accessValues(scope),
    prepareOnServer: false,
  });
  return sorted(rows.map((r) => r.id));
}

/** The list's access paths of a scope, each read alone. */
async function byPaths(scope: CallerScope): Promise<string[]> {
  const shape = accessShape(scope, undefined);
  if (!shape) return [];
  const out: string[] = [];
  for (const [i, path] of accessPaths(shape).entries()) {
    const rows = await runStatement(handle.db, {
      // Named by the shape too: prepared statements are kept by name.
      name: `agreement.${accessShapeName(shape)}.path-${i}`,
      build: (db) => db.select({ id: contracts.id }).from(contracts).where(path),
      values: accessPathValues(scope, shape),
      prepareOnServer: false,
    });
    out.push(...rows.map((r) => r.id));
  }
  return sorted(out);
}

/** The contracts whose creation the event list shows the scope (its events after `after`): the access paths over webhook_events. */
async function byEventList(scope: CallerScope, after: number): Promise<string[]> {
  const shape = accessShape(scope, undefined);
  if (!shape) return [];
  const events = await selectEventPage(handle.db, scope, shape, { after, limit: 1000, types: ['contract.created'] });
  return sorted(events.map((e) => e.contractId!));
}

/** The count's paths (the personal path, all organisations at once), counted. */
async function byCountPaths(scope: CallerScope): Promise<number> {
  const shape = accessShape(scope, undefined);
  if (!shape) return 0;
  let n = 0;
  for (const [i, path] of countPaths(shape).entries()) {
    const [row] = await runStatement(handle.db, {
      name: `agreement.${shape.personal ? 'personal+orgs' : 'orgs'}.count-path-${i}`,
      build: (db) => db.select({ n: sql<number>`count(*)::int` }).from(contracts).where(path),
      values: countPathValues(scope, shape),
      prepareOnServer: false,
    });
    n += Number(row!.n);
  }
  return n;
}

/** Each path's counters (the counter tables' keys, counterPathKeys), as the plan's figures read them, summed. */
async function byPathCounters(scope: CallerScope): Promise<number> {
  const shape = accessShape(scope, undefined);
  if (!shape) return 0;
  const figures = await readFigures(handle.db, scope, shape, filterShape({}), { searchRange: { kind: 'path' } });
  return figures.searchRange!.reduce((a, b) => a + b, 0);
}

/** The list as the API answers it (every page of it: at most 14 contracts, one page). */
async function byList(scope: CallerScope): Promise<{ ids: string[]; total: number }> {
  const page = await listContractsPage(handle.db, scope, listContractsInput.parse({ limit: '100' }));
  return { ids: sorted(page.contracts.map((c) => c.id)), total: page.pagination.total };
}

describe('who may see which contract: every form agrees with the rule', () => {
  it('for personal and organisation keys, webhook endpoints, and through the list and its totals', async () => {
    await fc.assert(
      fc.asyncProperty(populationArb, async (p) => {
        const start = await currentEventPosition(handle.db);
        await insert(p);
        for (const [i, key] of p.keys.entries()) {
          const reach = keyReach(p, key);
          const expected = ids(seen(p, reach));
          const label = JSON.stringify({ key: i, reach });
          const token = (await loadTokenScope(handle.db, keyId(i)))!;
          // The scope a request is read with.
          expect({ personal: token.scope.personal, orgs: sorted(token.scope.organizationIds) }, label).toEqual({ personal: reach.personal, orgs: reach.orgs.map(orgId).sort() });
          expect(await byPredicate(token.scope), `${label} predicate`).toEqual(expected);
          expect(await byPaths(token.scope), `${label} paths`).toEqual(expected);
          expect(await byEventList(token.scope, start), `${label} event list`).toEqual(expected);
          const list = await byList(token.scope);
          expect(list.ids, `${label} list`).toEqual(expected);
          // The total, from the per-path counters (migrations 0007 to 0009) or a count.
          expect(list.total, `${label} list total`).toBe(expected.length);
          expect(await countContracts(handle.db, token.scope, {}), `${label} count`).toBe(expected.length);
          expect(await byCountPaths(token.scope), `${label} count paths`).toBe(expected.length);
          expect(await byPathCounters(token.scope), `${label} each path's counters`).toBe(expected.length);
          // Filtered to each organisation it reaches: that organisation's share, page and total.
          for (const org of reach.orgs) {
            const ofOrg = ids(seen(p, reach).filter((c) => p.contracts[c]!.org === org));
            const page = await listContractsPage(handle.db, token.scope, listContractsInput.parse({ limit: '100', organization_id: orgId(org) }));
            expect({ ids: sorted(page.contracts.map((c) => c.id)), total: page.pagination.total }, `${label} organisation ${org}`).toEqual({ ids: ofOrg, total: ofOrg.length });
          }
          const completed = seen(p, reach).filter((c) => p.contracts[c]!.status === 'completed').length;
          expect(await countContracts(handle.db, token.scope, { status: 'completed' }), `${label} count of completed`).toBe(completed);
        }
        // Webhook endpoints: the scope a delivery is checked with, and the fan-out's rule turned around.
        const fannedOut = await executeRows<{ endpoint: string; contract: string }>(
          handle.db,
          sql`SELECT e.id::text AS endpoint, c.id::text AS contract FROM webhook_endpoints e CROSS JOIN contracts c WHERE ${endpointMaySee(sql`c.owner_id`, sql`c.organization_id`)}`,
        );
        for (const [i, endpoint] of p.endpoints.entries()) {
          const reach = { user: endpoint.user, ...memberReach(p, endpoint.user, endpoint.access) };
          const expected = ids(seen(p, reach));
          const label = JSON.stringify({ endpoint: i, reach });
          const scope = (await loadEndpointScope(handle.db, endpointId(i)))!;
          expect(await byPredicate(scope), `${label} predicate`).toEqual(expected);
          expect(sorted(fannedOut.filter((row) => row.endpoint === endpointId(i)).map((row) => row.contract)), `${label} fan-out`).toEqual(expected);
        }
      }),
      { numRuns: 25, seed: 20261202 },
    );
  }, 180_000);
});
