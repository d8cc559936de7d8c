import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_PASSWORD, DEMO_USERS } from '@/db/seed/demo';
import { hashToken, TOKEN_FORMATS } from '@/server/access/token-format';
import { databaseUrl } from '@/scripts/cluster/layout';
import { ensurePrograms } from '@/scripts/cluster/packages';
import { ensureReplica, stopPostgres } from '@/scripts/cluster/postgres';
import { cluster, instanceNames, mintKey, request, revokeKey, signIn, trpcMutation, type Answer, type Cluster } from './support';

/**
 * What every instance agrees on, whichever serves a request: a revoked key, a revoked
 * calendar feed and an expired key are refused by all three within a second (although
 * each instance caches verified keys for 30 s); a key works on every instance as soon as
 * it is created; lists, get-one and exports read from the replica, and from the primary
 * while the replica is down.
 */

let c: Cluster;
let sql: postgres.Sql;
let replicaSql: postgres.Sql;
const cleanup: (() => Promise<unknown>)[] = [];
beforeAll(() => {
  c = cluster();
  sql = postgres(c.primaryUrl, { max: 2, onnotice: () => {} });
  replicaSql = postgres(databaseUrl(c.state, c.secrets, { through: 'replica' }), { max: 1, onnotice: () => {} });
});
afterAll(async () => {
  for (const undo of cleanup) await undo().catch(() => {});
  await sql?.end();
  await replicaSql?.end();
});

const list = (key: string) => request(c, '/api/v1/contracts?limit=1', { headers: { 'x-api-key': key } });

/** Sequential requests through the balancer (round robin) until every instance has answered `rounds` times. */
async function acrossInstances(send: () => Promise<Answer>, rounds = 2): Promise<Answer[]> {
  const answers: Answer[] = [];
  const names = instanceNames(c);
  const enough = () => names.every((n) => answers.filter((a) => a.servedBy === n).length >= rounds);
  for (let i = 0; i < names.length * rounds * 4 && !enough(); i++) answers.push(await send());
  expect(enough(), `answers by instance: ${answers.map((a) => a.servedBy).join(',')}`).toBe(true);
  return answers;
}

/** A token of `kind` written straight into the primary (as the settings page would), with its secret. */
async function insertToken(kind: 'api_key' | 'calendar_feed', expiresAt: Date | null) {
  const secret = TOKEN_FORMATS[kind].generate();
  const [row] = await sql<{ id: string }[]>`
    INSERT INTO access_tokens (user_id, kind, name, token_hash, hint, expires_at)
    VALUES (${DEMO_USERS.carol.id}, ${kind}, 'cluster consistency', ${hashToken(secret)}, ${TOKEN_FORMATS[kind].hint(secret)}, ${expiresAt})
    RETURNING id`;
  cleanup.push(() => sql`UPDATE access_tokens SET revoked_at = now() WHERE id = ${row!.id} AND revoked_at IS NULL`);
  return { secret, id: row!.id };
}

describe('revocation and expiry, on every instance', () => {
  it('a key revoked with `npm run apikey -- revoke` is refused by every instance within a second, caches notwithstanding', async () => {
    const { key, id } = await mintKey(c, DEMO_USERS.bob.email, 'cluster revocation');
    // Every instance has verified (and cached) the key.
    expect((await acrossInstances(() => list(key))).map((a) => a.status)).toEqual(expect.arrayContaining([200]));
    expect((await acrossInstances(() => list(key))).every((a) => a.status === 200)).toBe(true);

    await revokeKey(c, id);
    const revokedAt = Date.now();
    const after = await acrossInstances(() => list(key));
    const elapsed = Date.now() - revokedAt;
    expect(after.map((a) => `${a.servedBy}:${a.status}`)).toEqual(after.map((a) => `${a.servedBy}:401`));
    expect(elapsed).toBeLessThan(1_000);
  });

  it('a key created and revoked in Settings (the app\'s tRPC endpoint, on whichever instance) works at once and is refused by every instance within a second', async () => {
    const cookie = await signIn(c, DEMO_USERS.bob.email, DEMO_PASSWORD);
    const created = await trpcMutation<{ secret: string; token: { id: string } }>(c, cookie, 'apiKeys.create', { name: 'cluster settings revocation', expiresInDays: 7 });
    cleanup.push(() => revokeKey(c, created.data.token.id));
    const key = created.data.secret;
    // Read its own write: every instance serves the new key (and caches it) at once.
    expect((await acrossInstances(() => list(key))).every((a) => a.status === 200)).toBe(true);

    const revoked = await trpcMutation(c, cookie, 'apiKeys.revoke', { id: created.data.token.id });
    const revokedAt = Date.now();
    const after = await acrossInstances(() => list(key));
    const elapsed = Date.now() - revokedAt;
    expect(after.map((a) => `${a.servedBy}:${a.status}`), `revoked on ${revoked.servedBy}`).toEqual(after.map((a) => `${a.servedBy}:401`));
    expect(elapsed).toBeLessThan(1_000);
  });

  it('a calendar feed created and revoked in Settings is a 404 on every instance from the next request', async () => {
    const cookie = await signIn(c, DEMO_USERS.bob.email, DEMO_PASSWORD);
    const created = await trpcMutation<{ url: string; token: { id: string } }>(c, cookie, 'calendarFeeds.create', { name: 'cluster settings feed' });
    const path = new URL(created.data.url).pathname;
    const fetchFeed = () => request(c, path);
    expect((await acrossInstances(fetchFeed, 1)).every((a) => a.status === 200)).toBe(true);
    await trpcMutation(c, cookie, 'calendarFeeds.revoke', { id: created.data.token.id });
    expect((await acrossInstances(fetchFeed, 1)).every((a) => a.status === 404)).toBe(true);
  });

  it('a calendar feed revoked on the primary is a 404 on every instance from the next request', async () => {
    const feed = await insertToken('calendar_feed', null);
    const fetchFeed = () => request(c, `/api/v1/calendar/${feed.secret}.ics`);
    expect((await acrossInstances(fetchFeed, 1)).every((a) => a.status === 200)).toBe(true);
    await sql`UPDATE access_tokens SET revoked_at = now() WHERE id = ${feed.id}`;
    expect((await acrossInstances(fetchFeed, 1)).every((a) => a.status === 404)).toBe(true);
  });

  it('a key that expires is refused by every instance from that moment, although each cached it before', async () => {
    const expiresAt = new Date(Date.now() + 4_000);
    const { secret } = await insertToken('api_key', expiresAt);
    expect((await acrossInstances(() => list(secret))).every((a) => a.status === 200)).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, expiresAt.getTime() - Date.now())));
    const after = await acrossInstances(() => list(secret));
    expect(after.every((a) => a.status === 401), after.map((a) => `${a.servedBy}:${a.status}`).join(',')).toBe(true);
    expect(Date.now() - expiresAt.getTime()).toBeLessThan(1_000 + 1_000 /* the requests themselves */);
  });

  it('a key works on every instance as soon as it is created (keys are read on the primary)', async () => {
    const { key, id } = await mintKey(c, DEMO_USERS.bob.email, 'cluster read own write');
    cleanup.push(() => revokeKey(c, id));
    expect((await acrossInstances(() => list(key))).every((a) => a.status === 200)).toBe(true);
  });
});

describe('the read replica', () => {
  /** Transactions the replica has run on the app's database, as its statistics count them. */
  const replicaTransactions = async () =>
    Number((await replicaSql<{ n: string }[]>`SELECT xact_commit + xact_rollback AS n FROM pg_stat_database WHERE datname = current_database()`)[0]!.n);

  it('serves lists, get-one and exports; while it is stopped, the primary does, and it is used again once back', async () => {
    // One key per phase, and few enough requests that no phase reaches a key's limits
    // (60 a minute, 10 exports an hour): a 429 here would hide what the replica did.
    const phaseKey = async () => (await insertToken('api_key', null)).secret;
    const reads = (key: string, lists: number, withExport: boolean) =>
      Promise.all([
        ...Array.from({ length: lists }, () => list(key)),
        request(c, '/api/v1/contracts/00000000-0000-4000-8000-000000000000', { headers: { 'x-api-key': key } }),
        ...(withExport ? [request(c, '/api/v1/contracts/export', { method: 'POST', body: '{"columns":["id"]}', headers: { 'x-api-key': key } })] : []),
      ]);
    /** Waits until the replica's statistics count at least `n` more transactions than `from`. */
    const replicaServed = async (from: number, n: number) => {
      let counted = 0;
      // Statistics are flushed within a second or so of the transactions.
      for (let i = 0; i < 30 && counted < n; i++) {
        await new Promise((resolve) => setTimeout(resolve, 200));
        counted = (await replicaTransactions()) - from;
      }
      return counted;
    };

    const before = await replicaTransactions();
    expect((await reads(await phaseKey(), 20, true)).map((a) => a.status)).toEqual([...Array(20).fill(200), 404, 200]);
    expect(await replicaServed(before, 22)).toBeGreaterThanOrEqual(22);

    const programs = ensurePrograms(() => {});
    await replicaSql.end();
    await stopPostgres(c.state, 'replica', programs);
    try {
      // A read that meets the stopped replica is read again on the primary; one that waits
      // on the pooler for the replica may run into the deadline: 503 with Retry-After.
      const key = await phaseKey();
      const rounds: Answer[][] = [];
      for (let i = 0; i < 12; i++) {
        rounds.push(await reads(key, 3, i % 4 === 3));
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
      const during = rounds.flat();
      for (const a of during.filter((x) => x.status === 503)) expect(a.headers['retry-after']).toBeDefined();
      expect(during.filter((a) => ![200, 404, 503].includes(a.status)).map((a) => `${a.status} ${a.body.slice(0, 200)}`)).toEqual([]);
      // From some moment on, every read succeeds on the primary.
      for (const round of rounds.slice(-4)) expect(round.map((a) => a.status)).toEqual(round.map((_, i) => (i === 3 ? 404 : 200)));
    } finally {
      await ensureReplica(c.state, c.secrets, programs, () => {});
      replicaSql = postgres(databaseUrl(c.state, c.secrets, { through: 'replica' }), { max: 1, onnotice: () => {} });
    }
    // Taken back after three good probes in a row (a second apart by default).
    const back = await replicaTransactions();
    await new Promise((resolve) => setTimeout(resolve, 5_000));
    expect((await reads(await phaseKey(), 20, true)).map((a) => a.status)).toEqual([...Array(20).fill(200), 404, 200]);
    expect(await replicaServed(back, 22)).toBeGreaterThanOrEqual(22);
  });
});
