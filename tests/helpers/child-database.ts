import { readFileSync } from 'node:fs';
import { openPglite, type DatabaseHandle } from '@/db/client';

/** The variable that hands a test's child process the migrated PGlite template of the run. */
export const PGLITE_TEMPLATE_ENV = 'CDA_TEST_PGLITE_TEMPLATE';

/**
 * The in-memory database of a test's child process (tests/server/support/*, tests/reliability/support/*):
 * a copy of the run's migrated template when the parent passed its path (about a second),
 * else a fresh PGlite with every migration (initdb: several seconds, far more on a loaded
 * machine, which is what made these child processes outlast their test's time limit).
 */
export function openChildPglite(): Promise<DatabaseHandle> {
  const template = process.env[PGLITE_TEMPLATE_ENV];
  return template ? openPglite(undefined, { loadDataDir: new Blob([readFileSync(template)]) }) : openPglite();
}
