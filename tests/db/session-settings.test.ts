import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'drizzle-orm';
import { executeRows, openPostgres, type DatabaseHandle } from '@/db/client';
import { PREPARE } from '../helpers/db';

/**
 * What the app's pool sets on each connection it opens (db/client.ts). A direct connection
 * sends the statement timeout and `jit = off` as startup parameters (JIT compiling a list
 * page took 135 to 155 ms before it ran in 13 to 65 ms at 2M contracts,
 * docs/query-plans.md). Behind a pooler (DATABASE_PREPARE=false, or a pooled host the app
 * recognises) nothing but application_name is sent: a pooler refuses startup parameters it
 * does not know and closes the connection (tests/reliability/stock-pgbouncer.test.ts), and
 * the role carries the settings there.
 */
describe.skipIf(!process.env.DATABASE_URL)('the settings of a pool’s connections (Postgres)', () => {
  let direct: DatabaseHandle;
  let pooled: DatabaseHandle;
  let pooledPrepared: DatabaseHandle;
  beforeAll(async () => {
    direct = await openPostgres(process.env.DATABASE_URL!, { max: 1, statementTimeoutMs: 4321 });
    pooled = await openPostgres(process.env.DATABASE_URL!, { max: 1, prepare: false, statementTimeoutMs: 4321 });
    // A pooler recognised by its host (Neon's -pooler endpoint), with named statements on.
    pooledPrepared = await openPostgres(process.env.DATABASE_URL!, { max: 1, behindPooler: true, statementTimeoutMs: 4321 });
  });
  afterAll(async () => {
    await direct?.close();
    await pooled?.close();
    await pooledPrepared?.close();
  });

  it.skipIf(!PREPARE)('turns JIT compiling and parallel query off and sets the statement timeout on a direct connection', async () => {
    expect(
      await direct.query('SELECT current_setting($1) AS jit, current_setting($2) AS timeout, current_setting($3) AS workers', [
        'jit',
        'statement_timeout',
        'max_parallel_workers_per_gather',
      ]),
    ).toEqual([{ jit: 'off', timeout: '4321ms', workers: '0' }]);
    expect(await direct.query("SELECT name, source FROM pg_settings WHERE name IN ('jit', 'max_parallel_workers_per_gather') ORDER BY name")).toEqual([
      { name: 'jit', source: 'client' },
      { name: 'max_parallel_workers_per_gather', source: 'client' },
    ]);
  });

  it('sends neither jit nor statement_timeout behind a pooler, only application_name', async () => {
    for (const handle of [pooled, pooledPrepared]) {
      const rows = await handle.query<{ name: string; source: string }>(
        "SELECT name, source FROM pg_settings WHERE name IN ('jit', 'statement_timeout', 'application_name', 'max_parallel_workers_per_gather') ORDER BY name",
      );
      expect(rows).toEqual([
        { name: 'application_name', source: 'client' },
        { name: 'jit', source: expect.not.stringMatching(/^client$/) },
        { name: 'max_parallel_workers_per_gather', source: expect.not.stringMatching(/^client$/) },
        { name: 'statement_timeout', source: expect.not.stringMatching(/^client$/) },
      ]);
    }
  });

  it('bounds the statements of a transaction behind a pooler with SET LOCAL', async () => {
    for (const handle of [pooled, pooledPrepared]) {
      const inside = await handle.db.transaction((tx) => executeRows<{ timeout: string }>(tx, sql`SELECT current_setting('statement_timeout') AS timeout`));
      expect(inside).toEqual([{ timeout: '4321ms' }]);
    }
  });
});
