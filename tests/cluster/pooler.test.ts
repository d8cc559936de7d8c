import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'drizzle-orm';
import { executeRows, openPostgres, type DatabaseHandle } from '@/db/client';
import { databaseUrl, REPLICA_DATABASE_ALIAS } from '@/scripts/cluster/layout';
import { cluster, type Cluster } from './support';

/**
 * The app's pools behind PgBouncer in transaction mode, as the instances open them
 * (`DATABASE_PREPARE=false`). With one connection and three things at once, postgres.js
 * must queue two of them. Written to the busy connection instead (pipelined), a query with
 * parameters sent behind one without (the replica probe's `SELECT pg_current_wal_lsn()`)
 * lost its answer in PgBouncer and waited for the request deadline: the 503 that CI saw
 * among 100 concurrent exports. The transaction checks that the way it is stopped
 * (db/client.ts, withoutPipelining) leaves postgres.js's `begin` working.
 */

const ROUNDS = 40;
/** Far above a round's few milliseconds; a lost answer never comes. */
const ANSWER_WITHIN_MS = 3_000;

let c: Cluster;
const pools: DatabaseHandle[] = [];
beforeAll(() => {
  c = cluster();
});
afterAll(async () => {
  await Promise.all(pools.map((p) => p.close()));
});

function within<T>(promise: Promise<T>, ms: number): Promise<T | 'no answer'> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([promise, new Promise<'no answer'>((resolve) => (timer = setTimeout(() => resolve('no answer'), ms)))]).finally(() => clearTimeout(timer));
}

describe.each([
  ['the primary', undefined],
  ['the replica', REPLICA_DATABASE_ALIAS],
])('a pool on %s through PgBouncer', (_name, database) => {
  it('answers queries with and without parameters and a transaction, sent at once to its only connection', async () => {
    const pool = await openPostgres(databaseUrl(c.state, c.secrets, { database }), { max: 1, prepare: false });
    pools.push(pool);
    const answers: unknown[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      const [withoutParameters, withParameters, inTransaction] = await Promise.all([
        within(pool.query('SELECT pg_sleep(0.002), 1 AS one'), ANSWER_WITHIN_MS),
        within(pool.query<{ n: number }>('SELECT $1::int AS n', [i]), ANSWER_WITHIN_MS),
        // Drizzle's transactions (Settings, the worker) share the pool with the reads.
        within(
          pool.db.transaction(async (tx) => executeRows<{ n: number }>(tx, sql`SELECT ${i}::int + 1000 AS n`)),
          ANSWER_WITHIN_MS,
        ).catch((error: Error) => error.message),
      ]);
      // 'no answer', an error's message, or what came back.
      const shown = (answer: unknown) => (typeof answer === 'string' ? answer : Array.isArray(answer) ? (answer[0] as { n?: number }).n ?? 'answered' : answer);
      answers.push([shown(withoutParameters), shown(withParameters), shown(inTransaction)]);
      if ([withoutParameters, withParameters, inTransaction].some((a) => typeof a === 'string')) break;
    }
    expect(answers).toEqual(Array.from({ length: ROUNDS }, (_, i) => ['answered', i, i + 1000]));
  });
});
