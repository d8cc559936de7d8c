import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPostgres, type DatabaseHandle } from '@/db/client';
import { PREPARE } from '../helpers/db';

/**
 * What the app's pool sets on each connection it opens (db/client.ts). JIT compiling is
 * off: a list page planned above jit_above_cost compiled for 135 to 155 ms before running
 * in 13 to 65 ms at 2M contracts (docs/query-plans.md). Behind a transaction pooler
 * (DATABASE_PREPARE=false) nothing but the statement timeout is sent: the pooler would
 * refuse the connection, and the role carries these settings there.
 */
describe.skipIf(!process.env.DATABASE_URL)('the settings of a pool’s connections (Postgres)', () => {
  let direct: DatabaseHandle;
  let pooled: DatabaseHandle;
  beforeAll(async () => {
    direct = await openPostgres(process.env.DATABASE_URL!, { max: 1, statementTimeoutMs: 4321 });
    pooled = await openPostgres(process.env.DATABASE_URL!, { max: 1, prepare: false, statementTimeoutMs: 4321 });
  });
  afterAll(async () => {
    await direct?.close();
    await pooled?.close();
  });

  it.skipIf(!PREPARE)('turns JIT compiling off and sets the statement timeout', async () => {
    expect(await direct.query('SELECT current_setting($1) AS jit, current_setting($2) AS timeout', ['jit', 'statement_timeout'])).toEqual([{ jit: 'off', timeout: '4321ms' }]);
    expect(await direct.query("SELECT source FROM pg_settings WHERE name = 'jit'")).toEqual([{ source: 'client' }]);
  });

  it('sends no jit setting with DATABASE_PREPARE=false (a transaction pooler refuses unknown startup parameters)', async () => {
    const [row] = await pooled.query<{ source: string }>("SELECT source FROM pg_settings WHERE name = 'jit'");
    expect(row!.source).not.toBe('client');
  });
});
