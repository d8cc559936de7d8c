import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    pgliteTemplate: string;
  }
}

/**
 * Builds one migrated PGlite database and saves it as a tarball; every test file loads
 * a private copy of it (about a second) instead of running initdb and the migrations
 * again (several seconds). With DATABASE_URL, tests use real Postgres instead and this
 * costs nothing.
 */
export default async function setup(project: TestProject) {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'cda-test-'));
  // A guard: nothing in a test run may open the developer's .data/ database.
  process.env.PGLITE_DIR = path.join(dir, 'never-used');
  const file = path.join(dir, 'template.tar.gz');
  if (!process.env.DATABASE_URL) {
    const { PGlite } = await import('@electric-sql/pglite');
    const { drizzle } = await import('drizzle-orm/pglite');
    const { migrateDatabase, pgliteExtensions } = await import('../../db/client');
    const client = await PGlite.create({ extensions: await pgliteExtensions() });
    await migrateDatabase(drizzle({ client }) as never, 'pglite');
    const dump = await client.dumpDataDir('gzip');
    writeFileSync(file, Buffer.from(await dump.arrayBuffer()));
    await client.close();
  }
  project.provide('pgliteTemplate', file);
  return () => rmSync(dir, { recursive: true, force: true });
}
