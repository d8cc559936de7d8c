import { migrateDatabase } from '@/db/client';
import { getDatabase } from '@/server/database';
import { runScript } from './run-script';

// Applies the committed migrations to the configured database (DATABASE_URL, or the
// embedded PGlite database under .data/, which is also migrated on first use).
runScript(async () => {
  const handle = await getDatabase();
  await migrateDatabase(handle.db, handle.driver);
  console.log(`Migrations applied (${handle.driver}).`);
  await handle.close();
});
