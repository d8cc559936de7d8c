import { existsSync, readFileSync } from 'node:fs';
import Redis from 'ioredis';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_USERS } from '@/db/seed/demo';
import { REVOCATION_CHANNEL } from '@/server/access/revocations';
import { hashToken, TOKEN_FORMATS } from '@/server/access/token-format';
import { instanceLog, instanceNumbers } from '@/scripts/cluster/instances';
import { APP_ROLE, databaseUrl, DATABASE, redisUrl } from '@/scripts/cluster/layout';
import { cluster, instanceNames, request, type Answer, type Cluster } from './support';

/**
 * LISTEN behind the stock PgBouncer (transaction mode): the instances' DATABASE_URL goes
 * through PgBouncer, which would accept a LISTEN and hear nothing for it; their LISTEN
 * connection goes to DATABASE_URL_UNPOOLED (the primary directly) instead. So a revocation
 * reaches every instance at once through Postgres alone, without the markers the
 * revocation also writes into Redis (server/access/revocations.ts): here the key is revoked
 * with SQL and a NOTIFY sent through PgBouncer, as the app sends it, and Redis never hears
 * of it. The startup check finds the role's settings as the app wants them (no warning).
 */

let c: Cluster;
let pooled: postgres.Sql;
let primaryAdmin: postgres.Sql;
let redis: Redis;
const cleanup: (() => Promise<unknown>)[] = [];
beforeAll(() => {
  c = cluster();
  pooled = postgres(databaseUrl(c.state, c.secrets), { max: 1, prepare: false, onnotice: () => {} });
  primaryAdmin = postgres(databaseUrl(c.state, c.secrets, { role: 'admin', through: 'primary' }), { max: 1, onnotice: () => {} });
  redis = new Redis(redisUrl(c.state, c.secrets), { lazyConnect: true, maxRetriesPerRequest: 1 });
});
afterAll(async () => {
  for (const undo of cleanup) await undo().catch(() => {});
  await pooled?.end();
  await primaryAdmin?.end();
  redis?.disconnect();
});

const list = (key: string) => request(c, '/api/v1/contracts?limit=1', { headers: { 'x-api-key': key } });

describe('LISTEN on the unpooled URL, behind PgBouncer', () => {
  it('each instance holds one LISTEN connection on the primary itself, outside PgBouncer', async () => {
    // The webhook worker listens from the start; revocations share its connection.
    const rows = await primaryAdmin<{ n: number }[]>`
      SELECT count(*)::int AS n FROM pg_stat_activity
       WHERE datname = ${DATABASE} AND usename = ${APP_ROLE} AND application_name = 'contract-data-api listen'`;
    expect(rows[0]!.n).toBe(instanceNames(c).length);
  });

  it('a key revoked through PgBouncer with a NOTIFY, no Redis marker, is refused by every instance within a second', async () => {
    const secret = TOKEN_FORMATS.api_key.generate();
    const [row] = await primaryAdmin<{ id: string }[]>`
      INSERT INTO access_tokens (user_id, kind, name, token_hash, hint, expires_at)
      VALUES (${DEMO_USERS.carol.id}, 'api_key', 'cluster listen', ${hashToken(secret)}, ${TOKEN_FORMATS.api_key.hint(secret)}, now() + interval '1 day')
      RETURNING id`;
    const id = row!.id;
    cleanup.push(() => primaryAdmin`UPDATE access_tokens SET revoked_at = now() WHERE id = ${id} AND revoked_at IS NULL`);
    const names = instanceNames(c);

    // Every instance verifies the key (and, listening already, caches it for 30 s).
    const warm: Answer[] = [];
    for (let i = 0; i < names.length * 12 && !names.every((n) => warm.filter((a) => a.servedBy === n).length >= 2); i++) warm.push(await list(secret));
    expect(warm.every((a) => a.status === 200), warm.map((a) => `${a.servedBy}:${a.status}`).join(' ')).toBe(true);
    expect(new Set(warm.map((a) => a.servedBy))).toEqual(new Set(names));

    await pooled.begin((tx) => [tx`UPDATE access_tokens SET revoked_at = now() WHERE id = ${id}`, tx`SELECT pg_notify(${REVOCATION_CHANNEL}, '')`]);
    const revokedAt = Date.now();

    // Until every instance has refused it, and no instance serves it again after refusing it.
    const refusedAt = new Map<string, number>();
    const servedAfterRefusal: string[] = [];
    while (refusedAt.size < names.length && Date.now() - revokedAt < 5_000) {
      const answer = await list(secret);
      const name = answer.servedBy ?? 'none';
      if (answer.status === 401) refusedAt.set(name, refusedAt.get(name) ?? Date.now() - revokedAt);
      else if (refusedAt.has(name)) servedAfterRefusal.push(`${name}:${answer.status}`);
    }
    expect([...refusedAt.keys()].sort()).toEqual([...names].sort());
    expect(Math.max(...refusedAt.values()), JSON.stringify(Object.fromEntries(refusedAt))).toBeLessThan(1_000);
    expect(servedAfterRefusal).toEqual([]);
    // Redis knew nothing of it: Postgres alone carried the revocation.
    await redis.connect();
    expect(await redis.exists(`cda:revoked:${id}`)).toBe(0);
  });

  it('the instances found the role’s settings as they want them at start: no ALTER ROLE warning in their logs', async () => {
    // What the startup check reads, through the way the instances use.
    const [settings] = await pooled<{ timeout: string; jit: string }[]>`SELECT current_setting('statement_timeout') AS timeout, current_setting('jit') AS jit`;
    expect(settings!.jit).toBe('off');
    expect(settings!.timeout).not.toBe('0');
    for (const n of instanceNumbers(c.state)) {
      const log = existsSync(instanceLog(c.state, n)) ? readFileSync(instanceLog(c.state, n), 'utf8') : '';
      expect(log.split('\n').filter((line) => line.includes('ALTER ROLE'))).toEqual([]);
    }
  });
});
