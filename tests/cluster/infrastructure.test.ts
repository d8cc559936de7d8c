import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_USERS } from '@/db/seed/demo';
import { databaseUrl, PGBOUNCER_DEFAULT_POOL_SIZE, REPLICA_DATABASE_ALIAS } from '@/scripts/cluster/layout';
import { pgbouncerShow } from '@/scripts/cluster/pgbouncer';
import { byInstance, cluster, instanceNames, mintKey, request, revokeKey, type Cluster } from './support';

/**
 * The parts of the cluster that the app's next steps (replica reads, revocation across
 * instances) will rely on: the instances reach Postgres only through PgBouncer in
 * transaction mode, and the replica follows the primary.
 */

let c: Cluster;
let key: { key: string; id: string };
beforeAll(async () => {
  c = cluster();
  key = await mintKey(c, DEMO_USERS.bob.email, 'cluster infrastructure');
});
afterAll(async () => {
  if (key) await revokeKey(c, key.id).catch(() => {});
});

describe('PgBouncer in front of the primary', () => {
  it('pools in transaction mode, with fewer server connections than the instances open', async () => {
    const config = Object.fromEntries(pgbouncerShow(c.state, c.secrets, 'CONFIG').map((row) => [row.key, row.value]));
    expect(config.pool_mode).toBe('transaction');

    const answers = await Promise.all(Array.from({ length: 45 }, (_, i) => request(c, `/api/v1/contracts?limit=5&offset=${i % 3}`, { headers: { 'x-api-key': key.key } })));
    expect(answers.map((a) => a.status)).toEqual(answers.map(() => 200));
    expect(Object.keys(byInstance(answers)).sort()).toEqual(instanceNames(c).sort());

    // The app's pools are PgBouncer's clients; Postgres sees at most PgBouncer's pool.
    const clients = pgbouncerShow(c.state, c.secrets, 'CLIENTS').filter((row) => row.database === 'cda_cluster' && row.application_name === 'contract-data-api');
    expect(clients.length).toBeGreaterThan(0);
    const servers = pgbouncerShow(c.state, c.secrets, 'SERVERS').filter((row) => row.database === 'cda_cluster' && row.user === 'cda');
    expect(servers.length).toBeGreaterThan(0);
    expect(servers.length).toBeLessThanOrEqual(PGBOUNCER_DEFAULT_POOL_SIZE);
  });
});

describe('the streaming replica', () => {
  it('has a write to the primary within a second, and refuses writes', async () => {
    const replica = postgres(databaseUrl(c.state, c.secrets, { through: 'replica' }), { max: 1, onnotice: () => {} });
    const pooledReplica = postgres(databaseUrl(c.state, c.secrets, { database: REPLICA_DATABASE_ALIAS }), { max: 1, prepare: false, onnotice: () => {} });
    try {
      // A write on the primary (the app's role, as the app writes), then polled on the replica.
      const primary = postgres(c.primaryUrl, { max: 1, onnotice: () => {} });
      const name = `replication probe ${Date.now()}`;
      try {
        await primary`UPDATE access_tokens SET name = ${name} WHERE id = ${key.id}`;
      } finally {
        await primary.end({ timeout: 5 });
      }
      const started = Date.now();
      let seen = false;
      while (!seen && Date.now() - started < 1000) {
        seen = (await replica`SELECT 1 FROM access_tokens WHERE id = ${key.id} AND name = ${name}`).length === 1;
        if (!seen) await new Promise((r) => setTimeout(r, 10));
      }
      expect(seen, 'the write reached the replica within 1 s').toBe(true);

      await expect(replica.unsafe('CREATE TABLE replica_write_probe (id int)')).rejects.toMatchObject({ code: '25006' });
      const [{ standby }] = (await pooledReplica.unsafe('SELECT pg_is_in_recovery() AS standby')) as unknown as [{ standby: boolean }];
      expect(standby).toBe(true);
    } finally {
      await replica.end({ timeout: 5 });
      await pooledReplica.end({ timeout: 5 });
    }
  });
});
