import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createContractDataClient, sync, type ContractDetail, type SyncStore } from '@/clients/typescript/src/index';
import type { DatabaseHandle } from '@/db/client';
import { contracts, memberships, organizations, users } from '@/db/schema';
import { createApiKey, editKeyRestrictions, setOrganizationPolicy } from '@/server/access/keys';
import { joinOrganization, leaveOrganization } from '@/server/access/memberships';
import { setProcessDatabase } from '@/server/database';
import { AppError } from '@/server/errors';
import { handleApiRequest } from '@/server/rest/router';
import { configureForFile } from '../helpers/config';
import { createTestDatabase } from '../helpers/db';

/**
 * The sync converges (issue 35): a copy kept by the typed client's `sync` (an NDJSON export,
 * then the event list from its X-Events-Cursor) equals what the key lists after every step
 * of a generated sequence of creates, updates, deletes, contracts moved to another
 * organisation or owner, TRUNCATEs, memberships ending and
 * starting, a key's access edited, an organisation's policy changed and concurrent writers;
 * each copy is brought up to date at random moments, for an unrestricted key, a restricted
 * key and an organisation's key. One copy's store can list its ids (so access.reduced
 * deletes in place); the others start again from an export instead.
 *
 * Through the REST handler in-process (the same code as over HTTP: tests/api), on PGlite
 * and on Postgres, where the concurrent writers really run at once. SYNC_RUNS changes the
 * number of sequences (default 12).
 */

configureForFile({ RATE_LIMIT_GENERAL_PER_WINDOW: '1000000', RATE_LIMIT_EXPORT_PER_WINDOW: '1000000' });

const BASE = 'http://localhost:3000/api/v1';
const U = '00000000-0000-4000-8000-00000000f101';
const V = '00000000-0000-4000-8000-00000000f102';
const A = '00000000-0000-4000-8000-00000000f1a1';
const B = '00000000-0000-4000-8000-00000000f1a2';
const RUNS = Number(process.env.SYNC_RUNS ?? 12);

let handle: DatabaseHandle;
let restrictedId: string;
const keys: { name: string; secret: string }[] = [];

beforeAll(async () => {
  handle = await createTestDatabase();
  setProcessDatabase(handle);
  await handle.db.insert(users).values([
    { id: U, email: 'sync-u@example.com' },
    { id: V, email: 'sync-v@example.com' },
  ]);
  await handle.db.insert(organizations).values([
    { id: A, name: 'Sync A' },
    { id: B, name: 'Sync B' },
  ]);
  await baseline();
  keys.push({ name: 'unrestricted', secret: (await createApiKey(handle.db, U, { name: 'all', expiresInDays: null })).secret });
  const restricted = await createApiKey(handle.db, U, { name: 'restricted', expiresInDays: null, access: { kind: 'chosen', personal: true, organizationIds: [A] } });
  restrictedId = restricted.token.id;
  keys.push({ name: 'restricted', secret: restricted.secret });
  keys.push({ name: 'organisation', secret: (await createApiKey(handle.db, V, { name: 'org', expiresInDays: null, owner: { kind: 'organization', organizationId: B } })).secret });
});
afterAll(() => handle?.close());

/** Both in both organisations (U owns A and B, V owns B), the policies open, the restricted key as created. */
async function baseline(): Promise<void> {
  await handle.query('DELETE FROM memberships');
  await handle.db.insert(memberships).values([
    { userId: U, organizationId: A, role: 'owner' },
    { userId: U, organizationId: B, role: 'owner' },
    { userId: V, organizationId: B, role: 'owner' },
  ]);
  await handle.query('UPDATE organizations SET member_keys_allowed = true');
  await handle.query('DELETE FROM token_organization_removals');
  if (restrictedId) await handle.query(`UPDATE access_tokens SET access_all = false, access_personal = true, access_organization_ids = '["${A}"]'::jsonb WHERE id = $1`, [restrictedId]);
}

const clientOf = (apiKey: string) => createContractDataClient({ baseUrl: BASE, apiKey, retry: false, fetch: (request) => handleApiRequest(request) });

class MapStore implements SyncStore {
  readonly rows = new Map<string, ContractDetail>();
  constructor(private readonly listable: boolean) {
    if (listable) this.ids = () => [...this.rows.keys()];
  }
  ids?: () => string[];
  get = (id: string) => this.rows.get(id);
  upsert = (contract: ContractDetail) => void this.rows.set(contract.id, contract);
  delete = (id: string) => void this.rows.delete(id);
  clear = () => this.rows.clear();
}

/** What the key lists now: every page of GET /contracts, each contract as GET /contracts/{id} shows it (its export line). */
async function listed(apiKey: string): Promise<Map<string, ContractDetail>> {
  const client = clientOf(apiKey);
  const ids: string[] = [];
  let cursor: string | undefined;
  do {
    const { data, error } = await client.GET('/contracts', { params: { query: { limit: 100, ...(cursor ? { cursor } : {}) } } });
    if (error) throw new Error(JSON.stringify(error));
    ids.push(...data.data.contracts.map((c) => c.id));
    cursor = data.data.pagination.next_cursor ?? undefined;
  } while (cursor);
  const details = new Map<string, ContractDetail>();
  for (const id of ids) {
    const { data, error } = await client.GET('/contracts/{id}', { params: { path: { id } } });
    if (error) throw new Error(JSON.stringify(error));
    details.set(id, data.data.contract);
  }
  return details;
}

type Step =
  | { kind: 'create'; owner: 'U' | 'V'; org: 'A' | 'B' | null; completed: boolean }
  | { kind: 'update'; pick: number; completed: boolean }
  | { kind: 'delete'; pick: number }
  | { kind: 'move'; pick: number; owner: 'U' | 'V'; org: 'A' | 'B' | null }
  | { kind: 'truncate' }
  | { kind: 'leave' | 'join'; who: 'U' | 'V'; org: 'A' | 'B' }
  | { kind: 'edit-access'; personal: boolean; orgs: ('A' | 'B')[] }
  | { kind: 'policy'; org: 'A' | 'B'; allowed: boolean }
  | { kind: 'concurrent'; writes: { org: 'A' | 'B' | null; pick: number }[] };

const org = fc.constantFrom<'A' | 'B' | null>('A', 'B', null);
const step: fc.Arbitrary<Step> = fc.oneof(
  { arbitrary: fc.record({ kind: fc.constant('create' as const), owner: fc.constantFrom<'U' | 'V'>('U', 'V'), org, completed: fc.boolean() }), weight: 4 },
  { arbitrary: fc.record({ kind: fc.constant('update' as const), pick: fc.nat(), completed: fc.boolean() }), weight: 3 },
  { arbitrary: fc.record({ kind: fc.constant('delete' as const), pick: fc.nat() }), weight: 2 },
  { arbitrary: fc.record({ kind: fc.constant('move' as const), pick: fc.nat(), owner: fc.constantFrom<'U' | 'V'>('U', 'V'), org }), weight: 2 },
  { arbitrary: fc.record({ kind: fc.constant('truncate' as const) }), weight: 1 },
  { arbitrary: fc.record({ kind: fc.constantFrom<'leave' | 'join'>('leave', 'join'), who: fc.constantFrom<'U' | 'V'>('U', 'V'), org: fc.constantFrom<'A' | 'B'>('A', 'B') }), weight: 3 },
  { arbitrary: fc.record({ kind: fc.constant('edit-access' as const), personal: fc.boolean(), orgs: fc.subarray<'A' | 'B'>(['A', 'B']) }), weight: 2 },
  { arbitrary: fc.record({ kind: fc.constant('policy' as const), org: fc.constantFrom<'A' | 'B'>('A', 'B'), allowed: fc.boolean() }), weight: 2 },
  { arbitrary: fc.record({ kind: fc.constant('concurrent' as const), writes: fc.array(fc.record({ org, pick: fc.nat() }), { minLength: 2, maxLength: 4 }) }), weight: 2 },
);
const ORGS = { A, B } as const;
const USERS = { U, V } as const;

async function someContract(pick: number): Promise<string | undefined> {
  const rows = await handle.query<{ id: string }>('SELECT id FROM contracts ORDER BY id');
  return rows.length === 0 ? undefined : rows[pick % rows.length]!.id;
}

const insertContract = (owner: string, organizationId: string | null, completed: boolean) =>
  handle.db.insert(contracts).values({
    ownerId: owner,
    organizationId,
    title: `Contract ${Math.random().toString(36).slice(2, 8)}`,
    fileName: 's.pdf',
    fileSize: 1,
    status: completed ? 'completed' : 'pending',
    ...(completed ? { renewalDate: '2027-06-30', autoRenewal: true, noticePeriod: 'P30D', contractValue: 1200.5, currency: 'EUR', summary: null } : {}),
  });

/** One step; a change the product refuses (editing access to an organisation U has left, a policy of an organisation U left) is skipped. */
async function run(s: Step): Promise<void> {
  try {
    switch (s.kind) {
      case 'create':
        return void (await insertContract(USERS[s.owner], s.org && ORGS[s.org], s.completed));
      case 'update': {
        const id = await someContract(s.pick);
        if (id) await handle.query(`UPDATE contracts SET title = title || '+', status = $2 WHERE id = $1`, [id, s.completed ? 'completed' : 'processing']);
        return;
      }
      case 'delete': {
        const id = await someContract(s.pick);
        if (id) await handle.query('DELETE FROM contracts WHERE id = $1', [id]);
        return;
      }
      case 'move': {
        // The pipeline moving a contract to another organisation or owner.
        const id = await someContract(s.pick);
        if (id) await handle.query('UPDATE contracts SET organization_id = $2, owner_id = $3 WHERE id = $1', [id, s.org && ORGS[s.org], USERS[s.owner]]);
        return;
      }
      case 'truncate':
        return void (await handle.query('TRUNCATE contracts'));
      case 'leave':
        return void (await leaveOrganization(handle.db, USERS[s.who], ORGS[s.org]));
      case 'join':
        return void (await joinOrganization(handle.db, USERS[s.who], ORGS[s.org], 'owner'));
      case 'edit-access':
        return void (await editKeyRestrictions(handle.db, U, {
          id: restrictedId,
          access: { kind: 'chosen', personal: s.personal || s.orgs.length === 0, organizationIds: s.orgs.map((o) => ORGS[o]) },
        }));
      case 'policy':
        return void (await setOrganizationPolicy(handle.db, U, ORGS[s.org], s.allowed));
      case 'concurrent':
        // Writers at once (on Postgres, on separate connections: their commits interleave).
        await Promise.all(
          s.writes.map(async (w, i) => {
            const id = i % 2 === 0 ? undefined : await someContract(w.pick);
            if (id) await handle.query(`UPDATE contracts SET file_size = file_size + 1 WHERE id = $1`, [id]);
            else await insertContract(U, w.org && ORGS[w.org], i % 3 === 0);
          }),
        );
        return;
    }
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
  }
}

describe('sync: export plus events', () => {
  it('keeps a copy equal to what each key lists, whatever happens in between', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 4, maxLength: 14 }), fc.array(fc.subarray([0, 1, 2]), { minLength: 14, maxLength: 14 }), async (steps, polls) => {
        await baseline();
        const copies = keys.map((key, i) => ({ key, store: new MapStore(i !== 1), cursor: undefined as string | undefined }));
        const bringUpToDate = async (copy: (typeof copies)[number]) => {
          copy.cursor = (await sync(clientOf(copy.key.secret), { store: copy.store, cursor: copy.cursor, pageSize: 7 })).cursor;
        };
        for (const copy of copies) await bringUpToDate(copy);
        for (const [i, s] of steps.entries()) {
          await run(s);
          // Some copies are brought up to date now, the others later (they fall behind for a while).
          for (const c of polls[i]!) await bringUpToDate(copies[c]!);
          for (const c of polls[i]!) {
            const copy = copies[c]!;
            expect(copy.store.rows, `${copy.key.name} after ${JSON.stringify(steps.slice(0, i + 1))}`).toEqual(await listed(copy.key.secret));
          }
        }
        for (const copy of copies) {
          await bringUpToDate(copy);
          expect(copy.store.rows, `${copy.key.name} at the end of ${JSON.stringify(steps)}`).toEqual(await listed(copy.key.secret));
        }
      }),
      { numRuns: RUNS },
    );
    // About 6 s for 12 sequences on an idle machine; the suite's other files run beside it.
  }, 180_000);
});
