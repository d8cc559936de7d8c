import { migrateDatabase } from '@/db/client';
import { openMigrationDatabase } from '@/server/database';
import { runScript } from './run-script';

// The migration step of a Vercel build (`npm run vercel-build`, which Vercel runs instead of
// `npm run build`): migrations are applied by production deployments only. A preview
// deployment builds from a branch that production may never run, and often shares the
// production database: migrating there would change production's schema ahead of its code.
// Elsewhere (no VERCEL_ENV) nothing is migrated either: self-hosting runs `npm run db:migrate`.
// The migrations go to the unpooled URL when one is set (DATABASE_URL_UNPOOLED, which Vercel's
// Neon integration sets, or POSTGRES_URL_NON_POOLING), not through the pooler.
runScript(async () => {
  const target = process.env.VERCEL_ENV;
  if (target !== 'production') {
    console.log(`Migrations skipped: VERCEL_ENV is ${target ? `"${target}"` : 'not set'} (only production deployments migrate).`);
    return;
  }
  const handle = await openMigrationDatabase();
  await migrateDatabase(handle.db, handle.driver);
  console.log(`Migrations applied (${handle.driver}) for the production deployment.`);
  await handle.close();
});
