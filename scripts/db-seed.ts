import { parseArgs } from 'node:util';
import { migrateDatabase } from '@/db/client';
import { getDatabase } from '@/server/database';
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

  const handle = await getDatabase();
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
    const plan = await seedScale(handle.db, contracts);
    console.log(
      `Scale data: ${plan.contracts} contracts, ${plan.users} users, ${plan.organizations} organisations in ${((Date.now() - started) / 1000).toFixed(1)} s.`,
    );
  }
  await handle.close();
});
