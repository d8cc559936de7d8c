import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { DatabaseHandle } from '@/db/client';
import { contracts, memberships } from '@/db/schema';
import { DEMO_ORGS, DEMO_USERS, demoContractRows, seedDemo } from '@/db/seed/demo';
import { getReadDb, setProcessDatabase } from '@/server/database';
import { apiRequest, PROXY_CLIENT_ADDRESS, send } from '../helpers/api';
import { configureForFile } from '../helpers/config';
import { captureLogs, type CapturedLogs } from '../helpers/logs';
import { createTestDatabase } from '../helpers/db';
import { newApiKey } from '../helpers/tokens';

/**
 * Reads of contracts go to the read replica (DATABASE_REPLICA_URL) while it answers and is
 * close behind the primary; keys and memberships are read on the primary, so a key works
 * at once after its creation and a removed membership is gone on the next request; a
 * replica that stops answering is left out and reads go to the primary.
 *
 * The "replica" here is a second database with the same rows, one title changed, so every
 * answer says where it was read. (A streaming replica behind PgBouncer, stopped and
 * started under load, is in tests/cluster/.)
 */

// Probes every second, each allowed a second. With 150 ms (a 300 ms lag bound) a probe
// slowed by a loaded CI machine left the replica out in the middle of the file
// (2026-11-26), and the reads went to the primary; nothing here needs a quicker probe: the
// failed read leaves the replica out at once.
configureForFile({ ...PROXY_CLIENT_ADDRESS, DATABASE_REPLICA_MAX_LAG_MS: '2000', RATE_LIMIT_GENERAL_PER_WINDOW: '10000', RATE_LIMIT_EXPORT_PER_WINDOW: '10000' });

const contract = demoContractRows().find((c) => c.organizationId === DEMO_ORGS.acme.id)!;
const REPLICA_TITLE = 'Read from the replica';

describe.skipIf(!process.env.DATABASE_URL)('the read replica (Postgres)', () => {
  let primary: DatabaseHandle;
  let replica: DatabaseHandle;
  let key: string;
  let logs: CapturedLogs | undefined;
  let warnings: string[] = [];

  beforeAll(async () => {
    [primary, replica] = await Promise.all([createTestDatabase(), createTestDatabase()]);
    await Promise.all([seedDemo(primary.db), seedDemo(replica.db)]);
    await replica.db.update(contracts).set({ title: REPLICA_TITLE }).where(eq(contracts.id, contract.id!));
    logs = captureLogs();
    warnings = logs.lines;
    setProcessDatabase(primary, replica);
    // Created on the primary only: the replica has never heard of it.
    key = (await newApiKey(primary.db, DEMO_USERS.alice.id, { name: 'replica' })).key;
    await vi.waitFor(async () => expect(await getReadDb()).toBe(replica.db), { timeout: 5_000 });
  });
  afterAll(async () => {
    vi.restoreAllMocks();
    logs?.restore();
    setProcessDatabase(primary);
    await Promise.all([primary?.close(), replica?.close()]);
  });

  const titleInList = async () => {
    const answer = await send(apiRequest('GET', '/contracts?limit=100', { key }));
    expect(answer.status, answer.text).toBe(200);
    return (answer.json as { data: { contracts: { id: string; title: string }[] } }).data.contracts.find((c) => c.id === contract.id)?.title;
  };

  it('serves lists, get-one and exports from the replica, with a key that exists on the primary only', async () => {
    expect(await titleInList()).toBe(REPLICA_TITLE);
    const one = await send(apiRequest('GET', `/contracts/${contract.id}`, { key }));
    expect((one.json as { data: { contract: { title: string } } }).data.contract.title).toBe(REPLICA_TITLE);
    const csv = await send(apiRequest('POST', '/contracts/export', { key, body: '{"columns":["title"]}' }));
    expect(csv.status).toBe(200);
    expect(csv.text).toContain(REPLICA_TITLE);
  });

  it('reads the memberships on the primary: a membership removed there is gone on the next request', async () => {
    await primary.db.delete(memberships).where(and(eq(memberships.userId, DEMO_USERS.alice.id), eq(memberships.organizationId, DEMO_ORGS.acme.id)));
    expect(await titleInList()).toBeUndefined();
    const one = await send(apiRequest('GET', `/contracts/${contract.id}`, { key }));
    expect(one.status).toBe(404);
    await primary.db.insert(memberships).values({ userId: DEMO_USERS.alice.id, organizationId: DEMO_ORGS.acme.id, role: 'owner' });
    expect(await titleInList()).toBe(REPLICA_TITLE);
  });

  it('answers a read the replica cannot serve from the primary, at once, and leaves the replica out (logged once)', async () => {
    expect(await getReadDb()).toBe(replica.db);
    await replica.close();
    // The very next request: read on the replica, failed, read again on the primary.
    expect(await titleInList()).toBe(contract.title);
    expect(await getReadDb()).toBe(primary.db);
    expect(await titleInList()).toBe(contract.title);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(warnings.filter((w) => w.includes('read replica left out'))).toHaveLength(1);
  });
});
