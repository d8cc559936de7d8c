import { migrateDatabase } from '@/db/client';
import { openMigrationDatabase } from '@/server/database';
import { runScript } from './run-script';

// Applies the committed migrations to the configured database (DATABASE_URL, or the
// embedded PGlite database under .data/, which is also migrated on first use), through
// DATABASE_URL_UNPOOLED (or POSTGRES_URL_NON_POOLING) when set rather than the pooler.
runScript(async () => {
  const handle = await openMigrationDatabase();
  await migrateDatabase(handle.db, handle.driver);
  console.log(`Migrations applied (${handle.driver}).`);
  await handle.close();
});
