import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The migrated PGlite data directory, as an uncompressed tarball ('' with DATABASE_URL). */
    pgliteTemplate: string;
    /** The migrated Postgres database every test file's database is copied from ('' without DATABASE_URL). */
    postgresTemplate: string;
  }
}

interface Templates {
  dir: string;
  pglite: string;
  postgres: string;
  users: number;
}

/**
 * Migrates one database for the whole run, which every test file copies instead of running
 * the migrations again: without DATABASE_URL a PGlite data directory saved as a tarball
 * (a copy loads in under a second; initdb and the migrations take several), with it a
 * Postgres database that `CREATE DATABASE … TEMPLATE` copies (tens of milliseconds, against
 * about a second of migrations per file).
 *
 * Both vitest projects (vitest.config.ts: shared and isolated) run this setup in the same
 * process: the first builds the templates, the last to finish removes them.
 */
const shared = globalThis as { cdaTestTemplates?: Promise<Templates> };

async function build(): Promise<Templates> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'cda-test-'));
  // A guard: nothing in a test run may open the developer's .data/ database.
  process.env.PGLITE_DIR = path.join(dir, 'never-used');
  const { migrateDatabase, openPostgres, pgliteExtensions } = await import('../../db/client');
  if (!process.env.DATABASE_URL) {
    const { PGlite } = await import('@electric-sql/pglite');
    const { drizzle } = await import('drizzle-orm/pglite');
    const client = await PGlite.create({ extensions: await pgliteExtensions() });
    await migrateDatabase(drizzle({ client }) as never, 'pglite');
    // Uncompressed: each copy loads faster than from gzip (about 0.3 s less a file here).
    const dump = await client.dumpDataDir('none');
    const pglite = path.join(dir, 'template.tar');
    writeFileSync(pglite, Buffer.from(await dump.arrayBuffer()));
    await client.close();
    return { dir, pglite, postgres: '', users: 0 };
  }
  // As tests/helpers/db.ts's PREPARE (which this process cannot import: it reads vitest's inject).
  const PREPARE = !['false', '0'].includes(process.env.DATABASE_PREPARE?.trim() ?? '');
  const name = `cda_test_template_${process.pid}`;
  const admin = await openPostgres(process.env.DATABASE_URL, { max: 1, prepare: PREPARE });
  await admin.query(`DROP DATABASE IF EXISTS ${name}`);
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.close();
  const url = new URL(process.env.DATABASE_URL);
  url.pathname = `/${name}`;
  const template = await openPostgres(url.toString(), { max: 1, prepare: PREPARE });
  await migrateDatabase(template.db, 'postgres');
  // No connection may remain: CREATE DATABASE … TEMPLATE refuses a template in use.
  await template.close();
  return { dir, pglite: '', postgres: name, users: 0 };
}

async function remove(templates: Templates) {
  rmSync(templates.dir, { recursive: true, force: true });
  if (!templates.postgres || !process.env.DATABASE_URL) return;
  const { openPostgres } = await import('../../db/client');
  const admin = await openPostgres(process.env.DATABASE_URL, { max: 1, prepare: false });
  await admin.query(`DROP DATABASE IF EXISTS ${templates.postgres} WITH (FORCE)`);
  await admin.close();
}

export default async function setup(project: TestProject) {
  shared.cdaTestTemplates ??= build();
  const templates = await shared.cdaTestTemplates;
  templates.users += 1;
  project.provide('pgliteTemplate', templates.pglite);
  project.provide('postgresTemplate', templates.postgres);
  return async () => {
    templates.users -= 1;
    if (templates.users === 0) await remove(templates);
  };
}
