import { randomBytes } from 'node:crypto';
import { migrateDatabase, openPostgres, type DatabaseHandle } from '@/db/client';
import { PREPARE } from '../../helpers/db';

/** The reason printed when a suite needs real Postgres and DATABASE_URL is not set. */
export const NEEDS_POSTGRES = 'needs real Postgres: set DATABASE_URL (CI does); skipped on the embedded PGlite';

export interface PrivatePostgres {
  /** Name of the database (for pg_stat_activity.datname). */
  name: string;
  /** URL of the database, for pools the test opens itself. */
  url: string;
  /** A migrated handle on it (owner of the data; not the app's pool). */
  handle: DatabaseHandle;
  /** A connection to the server's maintenance database, for pg_stat_activity and locks. */
  admin: DatabaseHandle;
  drop(): Promise<void>;
}

/**
 * A fresh, migrated Postgres database next to DATABASE_URL's, dropped by `drop()`. Unlike
 * tests/helpers/db.ts it exposes its URL and name, so a test can open its own pools
 * (through a proxy, with a short statement timeout) and watch its connections.
 */
export async function createPrivatePostgres(label: string): Promise<PrivatePostgres> {
  const baseUrl = process.env.DATABASE_URL;
  if (!baseUrl) throw new Error(NEEDS_POSTGRES);
  const name = `cda_${label}_${process.pid}_${randomBytes(4).toString('hex')}`;
  const admin = await openPostgres(baseUrl, { max: 2, prepare: PREPARE });
  await admin.query(`CREATE DATABASE ${name}`);
  const url = withDatabase(baseUrl, name);
  const handle = await openPostgres(url, { max: 2, prepare: PREPARE });
  await migrateDatabase(handle.db, 'postgres');
  return {
    name,
    url,
    handle,
    admin,
    async drop() {
      await handle.close();
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.close();
    },
  };
}

export function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}

/** The same URL pointing at another host and port (a proxy in front of the server). */
export function viaPort(url: string, port: number): string {
  const u = new URL(url);
  u.hostname = '127.0.0.1';
  u.port = String(port);
  return u.toString();
}

export interface BackendRow {
  pid: number;
  state: string | null;
  query: string;
  state_change: string | null;
  application_name: string;
}

/** Client backends connected to `database`, except the asking one. */
export async function backendsOf(admin: DatabaseHandle, database: string): Promise<BackendRow[]> {
  return admin.query<BackendRow>(
    `SELECT pid, state, query, state_change::text AS state_change, application_name
       FROM pg_stat_activity
      WHERE datname = $1 AND backend_type = 'client backend' AND pid <> pg_backend_pid()
      ORDER BY pid`,
    [database],
  );
}
