import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { inject } from 'vitest';
import { openPglite, openPostgres, migrateDatabase, type Database, type DatabaseHandle } from '@/db/client';
import { PGLITE_TEMPLATE_ENV } from './child-database';
import { leasePglite } from './pglite-reuse';

/**
 * postgres.js's `prepare` for the connections tests open themselves: off when
 * DATABASE_PREPARE is false, as for the app's own pool. Behind a transaction-mode pooler
 * (PgBouncer 1.18) a named prepared statement is lost between transactions.
 */
export const PREPARE = !['false', '0'].includes(process.env.DATABASE_PREPARE?.trim() ?? '');

/** The migrated template's tarball, read once per worker (the shared project keeps modules between files). */
let pgliteTemplate: Blob | undefined;

/**
 * A private, migrated database for one test file: a fresh Postgres database next to
 * DATABASE_URL's, copied from the run's migrated template (tests/helpers/global-setup.ts)
 * and dropped afterwards, when DATABASE_URL is set; else an in-memory PGlite copy of the
 * migrated template. `migrationsFolder` migrates an empty database with another set of
 * migrations instead (the test of a migration starts from the ones before it).
 */
export async function createTestDatabase(options: { migrationsFolder?: string } = {}): Promise<DatabaseHandle & { url?: string }> {
  const baseUrl = process.env.DATABASE_URL;
  if (!baseUrl) {
    if (options.migrationsFolder) return openPglite(undefined, { migrationsFolder: options.migrationsFolder });
    if (process.env.CDA_TEST_REUSE_DATABASES === '1') return leasePglite(pgliteTemplateBlob());
    return openPglite(undefined, { loadDataDir: pgliteTemplateBlob() });
  }
  const name = `cda_test_${process.pid}_${randomBytes(4).toString('hex')}`;
  const template = options.migrationsFolder ? undefined : inject('postgresTemplate');
  const admin = await openPostgres(baseUrl, { max: 1, prepare: PREPARE });
  await admin.query(template ? `CREATE DATABASE ${name} TEMPLATE ${template}` : `CREATE DATABASE ${name}`);
  await admin.close();
  const url = new URL(baseUrl);
  url.pathname = `/${name}`;
  const handle = await openPostgres(url.toString(), { max: 4, prepare: PREPARE });
  if (!template) await migrateDatabase(handle.db, 'postgres', options.migrationsFolder);
  return {
    ...handle,
    // For a second pool on the same database (another worker, another writer).
    url: url.toString(),
    async close() {
      await handle.close();
      const cleanup = await openPostgres(baseUrl, { max: 1, prepare: PREPARE });
      await cleanup.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await cleanup.close();
    },
  };
}

function pgliteTemplateBlob(): Blob {
  pgliteTemplate ??= new Blob([readFileSync(inject('pgliteTemplate'))]);
  return pgliteTemplate;
}

/**
 * A database of its own for commands run as real processes (`npm run apikey`, …): a copy
 * of the run's migrated template, seeded here by `seed`, and the environment that points
 * a child process at it: a PGlite directory (PGLITE_DIR), or a Postgres database next to
 * DATABASE_URL's. A copy costs a second; `npm run db:seed` in a process of its own, on an
 * empty directory, was ten.
 */
export async function createChildProcessDatabase(seed: (db: Database) => Promise<unknown>): Promise<{ env: Record<string, string>; remove(): Promise<void> }> {
  if (process.env.DATABASE_URL) {
    const handle = await createTestDatabase();
    try {
      await seed(handle.db);
    } catch (error) {
      await handle.close();
      throw error;
    }
    return { env: { DATABASE_URL: handle.url! }, remove: () => handle.close() };
  }
  const dir = mkdtempSync(path.join(os.tmpdir(), 'cda-child-db-'));
  const remove = async () => rmSync(dir, { recursive: true, force: true });
  // Two folders that do not exist yet, as `.data/pglite` on a fresh clone: opening creates them.
  const dataDir = path.join(dir, '.data', 'pglite');
  const handle = await openPglite(dataDir, { loadDataDir: pgliteTemplateBlob() });
  try {
    await seed(handle.db);
  } finally {
    await handle.close();
  }
  return { env: { PGLITE_DIR: dataDir }, remove };
}

/** The URL of the test database, for code under test that opens its own connection. */
export function describeDriver(): string {
  return process.env.DATABASE_URL ? 'postgres' : 'pglite';
}

/**
 * How long a test waits for a child process that loads next-auth (tsx compiling it cold)
 * and opens a database: seconds on a quiet machine, tens of seconds on a loaded one.
 */
export const CHILD_TIMEOUT_MS = 120_000;

/**
 * The environment that lets a child process of a test open a copy of the run's migrated
 * PGlite template (tests/helpers/child-database.ts); empty when the run has none (with
 * DATABASE_URL the template is not built).
 */
export function childDatabaseEnv(): Record<string, string> {
  const template = inject('pgliteTemplate');
  return template && existsSync(template) ? { [PGLITE_TEMPLATE_ENV]: template } : {};
}
