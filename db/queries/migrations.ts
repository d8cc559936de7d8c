import journal from '../migrations/meta/_journal.json';
import type { DatabaseHandle } from '../client';

/**
 * Which migrations a database has, against the ones this build carries.
 *
 * Drizzle's migrator (the same pg-core code behind postgres-js and PGlite) records each
 * applied migration as a row of `drizzle.__drizzle_migrations` whose `created_at` is the
 * migration's `when` in meta/_journal.json, and applies a migration only when its `when`
 * is after the latest row's. So "up to date" is: the latest row's created_at is at least
 * the journal's last `when`. The journal is imported, not read from disk: it is part of
 * the build, so the answer is "the latest migration this build knows" even where the
 * migrations folder is not shipped with the function.
 */

export interface MigrationEntry {
  idx: number;
  tag: string;
  when: number;
}

export const BUILD_MIGRATIONS: readonly MigrationEntry[] = journal.entries.map(({ idx, tag, when }) => ({ idx, tag, when }));

/** The last migration of this build. */
export const LATEST_MIGRATION: MigrationEntry = BUILD_MIGRATIONS.at(-1)!;

/** Postgres's undefined_table and invalid_schema_name: nothing was ever migrated. */
const NEVER_MIGRATED = new Set(['42P01', '3F000']);

/**
 * The `when` of the latest migration applied to the database, or null when none was.
 * bigint is read as text: the two drivers parse it differently.
 */
export async function lastAppliedMigrationMillis(handle: Pick<DatabaseHandle, 'query'>): Promise<number | null> {
  try {
    const rows = await handle.query<{ created_at: string | null }>('SELECT max(created_at)::text AS created_at FROM drizzle.__drizzle_migrations');
    const value = rows[0]?.created_at;
    return value == null ? null : Number(value);
  } catch (error) {
    if (NEVER_MIGRATED.has((error as { code?: string }).code ?? '')) return null;
    throw error;
  }
}

/** The tag of the build's migration recorded at `when`, if this build has one. */
export const migrationTagAt = (when: number): string | undefined => BUILD_MIGRATIONS.find((m) => m.when === when)?.tag;
