import { LATEST_MIGRATION, lastAppliedMigrationMillis, migrationTagAt } from '@/db/queries/migrations';
import { getDatabase } from '@/server/database';
import { withinBudget } from '@/server/budget';
import type { MigrationsReport } from './types';

/**
 * The primary has every migration this build knows. A database ahead of the build (a
 * newer release migrated it while this one still runs, as in a rolling deploy) is ready:
 * migrations only add (docs/operations.md), so this build's schema is all there.
 */
export async function checkMigrations(budgetMs: number): Promise<MigrationsReport> {
  const expected = LATEST_MIGRATION.tag;
  const outcome = await withinBudget(async () => lastAppliedMigrationMillis(await getDatabase()), budgetMs);
  if (!outcome.ok) return { status: 'failing', duration_ms: outcome.durationMs, error: outcome.error, applied: null, expected };
  const when = outcome.value;
  const applied = when === null ? null : (migrationTagAt(when) ?? 'unknown');
  if (when === null || when < LATEST_MIGRATION.when) {
    return { status: 'failing', duration_ms: outcome.durationMs, error: 'behind', applied, expected };
  }
  return { status: 'ok', duration_ms: outcome.durationMs, applied, expected };
}
