import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { count } from 'drizzle-orm';
import { migrateDatabase } from '@/db/client';
import { getDatabase } from '@/server/database';
import { users } from '@/db/schema';
import { DEMO_PASSWORD, DEMO_USERS, seedDemo } from '@/db/seed/demo';
import { authSecret, config } from '@/server/config';

// `npm run dev`: prepares the database (migrations, then the demo data if it is empty),
// then starts `next dev`. With no DATABASE_URL the database is PGlite under .data/.
async function prepare() {
  const cfg = config();
  authSecret(); // generated once under .data/ when AUTH_SECRET is not set
  const handle = await getDatabase();
  await migrateDatabase(handle.db, handle.driver);
  const [{ n } = { n: 0 }] = await handle.db.select({ n: count() }).from(users);
  if (n === 0) {
    await seedDemo(handle.db);
    console.log('Demo data seeded.');
  }
  // PGlite allows one process per directory: release it before Next.js opens it.
  await handle.close();
  return cfg.database.url ? 'Postgres (DATABASE_URL)' : `embedded PGlite in ${cfg.database.pgliteDir}`;
}

prepare().then(
  (where) => {
    const port = process.env.PORT ?? '3000';
    console.log(`\n  Contract Data API: http://localhost:${port}`);
    console.log(`  Database: ${where}`);
    console.log(`  Demo login: ${DEMO_USERS.alice.email} / ${DEMO_PASSWORD} (also bob@, carol@example.com)\n`);
    const child = spawn(process.execPath, [createRequire(import.meta.url).resolve('next/dist/bin/next'), 'dev', '--port', port], {
      stdio: 'inherit',
      // Log lines for a person at a terminal unless asked otherwise (server/observability/logger.ts).
      env: { ...process.env, LOG_FORMAT: process.env.LOG_FORMAT ?? 'pretty' },
    });
    const stop = (signal: NodeJS.Signals) => child.kill(signal);
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
    child.on('exit', (code) => process.exit(code ?? 0));
  },
  (error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  },
);
