import { parseArgs } from 'node:util';
import { migrateDatabase, openDatabase } from '@/db/client';
import { config } from '@/server/config';
import { resetData, seedDemo } from '@/db/seed/demo';
import { seedScale } from '@/db/seed/scale';
import { runScript, UsageError } from './run-script';

const USAGE = `Usage: npm run db:seed -- [--reset] [--contracts N]
  (no options)     insert the demo accounts and contracts; running it again changes nothing
  --reset          delete every row first, then seed
  --contracts N    also build a scale dataset of N contracts (benchmarks)`;

runScript(async () => {
  let values;
  try {
    ({ values } = parseArgs({
      options: { reset: { type: 'boolean', default: false }, contracts: { type: 'string' }, help: { type: 'boolean' } },
      strict: true,
    }));
  } catch (error) {
    throw new UsageError(`${(error as Error).message}\n${USAGE}`);
  }
  if (values.help) {
    console.log(USAGE);
    return;
  }
  const contracts = values.contracts === undefined ? undefined : Number(values.contracts);
  if (contracts !== undefined && (!Number.isInteger(contracts) || contracts < 100 || contracts > 10_000_000)) {
    throw new UsageError(`--contracts must be a whole number between 100 and 10000000\n${USAGE}`);
  }

  // The seed's own connection, not the app's pool: ONE session (so that a session setting
  // holds for the next statement, which VACUUM needs), on the unpooled URL when there is
  // one (as migrations), and without the API's statement timeout: a bulk load, its index
  // builds and VACUUM ANALYZE are not requests (each step also lifts the timeout itself,
  // for a role that carries one). Behind a transaction pooler without an unpooled URL a
  // session setting is not kept between statements: set DATABASE_URL_UNPOOLED.
  const settings = config().database;
  const handle = await openDatabase({
    ...settings,
    url: settings.unpooledUrl ?? settings.url,
    unpooledUrl: undefined,
    pooler: settings.unpooledUrl ? undefined : settings.pooler,
    poolMax: 1,
    statementTimeoutMs: 0,
  });
  if (settings.url) await handle.query('SET statement_timeout = 0');
  // Seeding needs the schema: apply any pending migration first (a no-op when current).
  await migrateDatabase(handle.db, handle.driver);
  if (values.reset) {
    await resetData(handle.db);
    console.log('All rows deleted.');
  }
  const demo = await seedDemo(handle.db);
  console.log(demo.inserted === 0 ? 'Demo data already present: nothing changed.' : `Demo data: ${demo.inserted} rows inserted.`);
  if (contracts !== undefined) {
    const started = Date.now();
    const plan = await seedScale(handle.db, contracts, { onProgress: (line) => console.log(`Scale data: ${line}`) });
    console.log(
      `Scale data: ${plan.contracts} contracts, ${plan.users} users, ${plan.organizations} organisations in ${((Date.now() - started) / 1000).toFixed(1)} s.`,
    );
  }
  await handle.close();
});
