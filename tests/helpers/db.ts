import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { inject } from 'vitest';
import { openPglite, openPostgres, migrateDatabase, type DatabaseHandle } from '@/db/client';

/**
 * A private, migrated database for one test file: a fresh Postgres database next to
 * DATABASE_URL's (dropped afterwards) when DATABASE_URL is set, else an in-memory PGlite
 * copy of the migrated template.
 */
export async function createTestDatabase(): Promise<DatabaseHandle> {
  const baseUrl = process.env.DATABASE_URL;
  if (!baseUrl) {
    const template = readFileSync(inject('pgliteTemplate'));
    return openPglite(undefined, { loadDataDir: new Blob([template]) });
  }
  const name = `cda_test_${process.pid}_${randomBytes(4).toString('hex')}`;
  const admin = await openPostgres(baseUrl, { max: 1 });
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.close();
  const url = new URL(baseUrl);
  url.pathname = `/${name}`;
  const handle = await openPostgres(url.toString(), { max: 4 });
  await migrateDatabase(handle.db, 'postgres');
  return {
    ...handle,
    async close() {
      await handle.close();
      const cleanup = await openPostgres(baseUrl, { max: 1 });
      await cleanup.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await cleanup.close();
    },
  };
}

/** The URL of the test database, for code under test that opens its own connection. */
export function describeDriver(): string {
  return process.env.DATABASE_URL ? 'postgres' : 'pglite';
}
