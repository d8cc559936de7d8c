import path from 'node:path';
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
import { config } from '@/server/config';
import * as schema from './schema';

/** The one database type every data-access function takes: the same on both drivers. */
export type Database = PgDatabase<PgQueryResultHKT, typeof schema>;

export interface DatabaseHandle {
  db: Database;
  driver: 'postgres' | 'pglite';
  /** Runs one raw statement with parameters (tools and tests; the app uses Drizzle). */
  query<T = Record<string, unknown>>(text: string, params?: unknown[]): Promise<T[]>;
  close(): Promise<void>;
}

export const MIGRATIONS_FOLDER = path.join(process.cwd(), 'db', 'migrations');

/** A postgres.js pool. One per process: the caller keeps it. */
export async function openPostgres(
  url: string,
  options: { max?: number; prepare?: boolean; statementTimeoutMs?: number } = {},
): Promise<DatabaseHandle> {
  const { default: postgres } = await import('postgres');
  const { drizzle } = await import('drizzle-orm/postgres-js');
  const client = postgres(url, {
    max: options.max ?? 10,
    prepare: options.prepare ?? true,
    // Idle connections are closed so that a database restart heals on its own.
    idle_timeout: 30,
    connect_timeout: 5,
    // Seconds before a connection tries again after its last attempt failed; `retries`
    // counts the pool's failures since its last success. postgres.js's default grows to
    // 20 s, so a dozen refusals into an outage a request waits 10-20 s before it even
    // tries, and so may the first one after the database is back. 0.1, 0.2, 0.4, then
    // 0.5 s at most: queued requests wait one backoff each. The jitter (half to all of
    // it) keeps the connections of every instance from reconnecting in step.
    backoff: (retries: number) => Math.min(0.05 * 2 ** retries, 0.5) * (0.5 + Math.random() / 2),
    onnotice: () => {},
    connection: {
      application_name: 'contract-data-api',
      ...(options.statementTimeoutMs ? { statement_timeout: options.statementTimeoutMs } : {}),
    },
  });
  const db = drizzle({ client, schema, casing: undefined });
  return {
    db: db as unknown as Database,
    driver: 'postgres',
    query: async <T>(text: string, params: unknown[] = []) =>
      (await client.unsafe(text, params as never[])) as unknown as T[],
    close: () => client.end({ timeout: 5 }),
  };
}

/** The extensions the migrations create (pg_trgm, for substring search), for PGlite to load. */
export async function pgliteExtensions() {
  const { pg_trgm } = await import('@electric-sql/pglite/contrib/pg_trgm');
  return { pg_trgm };
}

/** An embedded PGlite database in `dir` (or in memory without one), migrated. */
export async function openPglite(dir?: string, options: { loadDataDir?: Blob } = {}): Promise<DatabaseHandle> {
  const { PGlite } = await import('@electric-sql/pglite');
  const { drizzle } = await import('drizzle-orm/pglite');
  const client = await PGlite.create({
    dataDir: dir,
    loadDataDir: options.loadDataDir,
    extensions: await pgliteExtensions(),
  });
  const db = drizzle({ client, schema }) as unknown as Database;
  await migrateDatabase(db, 'pglite');
  return {
    db,
    driver: 'pglite',
    query: async <T>(text: string, params: unknown[] = []) => (await client.query<T>(text, params)).rows,
    close: () => client.close(),
  };
}

/** Applies the committed SQL migrations (idempotent: applied ones are skipped). */
export async function migrateDatabase(db: Database, driver: DatabaseHandle['driver']) {
  if (driver === 'pglite') {
    const { migrate } = await import('drizzle-orm/pglite/migrator');
    await migrate(db as never, { migrationsFolder: MIGRATIONS_FOLDER });
  } else {
    const { migrate } = await import('drizzle-orm/postgres-js/migrator');
    await migrate(db as never, { migrationsFolder: MIGRATIONS_FOLDER });
  }
}

/** Opens the database the configuration names: Postgres with DATABASE_URL, else PGlite. */
export async function openConfiguredDatabase(): Promise<DatabaseHandle> {
  const { database } = config();
  if (database.url) {
    return openPostgres(database.url, {
      max: database.poolMax,
      prepare: database.prepare,
      statementTimeoutMs: database.statementTimeoutMs,
    });
  }
  return openPglite(database.pgliteDir);
}

// The process-wide handle lives on globalThis: Next.js may evaluate this module once per
// bundle layer, and two PGlite instances on one directory would corrupt it.
const HANDLE = Symbol.for('contract-data-api.database');
type GlobalWithDb = typeof globalThis & { [HANDLE]?: Promise<DatabaseHandle> };

/** The process's database, opened on first use and shared by every request after it. */
export function getDatabase(): Promise<DatabaseHandle> {
  const g = globalThis as GlobalWithDb;
  g[HANDLE] ??= openConfiguredDatabase().catch((error: unknown) => {
    // A failed open (database down at start) must not poison the process: retry next time.
    delete g[HANDLE];
    throw error;
  });
  return g[HANDLE];
}

/** Makes `handle` the process's database (tests run the app's code against their own database). */
export function setProcessDatabase(handle: DatabaseHandle): void {
  (globalThis as GlobalWithDb)[HANDLE] = Promise.resolve(handle);
}

export async function getDb(): Promise<Database> {
  return (await getDatabase()).db;
}

/** A query whose parameters are `sql.placeholder()`s, as Drizzle's select builders are. */
export interface PreparableQuery<TResult> {
  prepare(name: string): { execute(values?: Record<string, unknown>): Promise<TResult> };
  execute(values?: Record<string, unknown>): Promise<TResult>;
  toSQL(): { sql: string; params: unknown[] };
}

/**
 * One statement of a fixed shape: its SQL text depends only on `name` (so it can be
 * prepared once and reused), and every value of the request is a placeholder filled from
 * `values`. `build` returns the Drizzle query; tools print it with `.toSQL()`.
 */
export interface Statement<TResult> {
  name: string;
  build(db: Database): PreparableQuery<TResult>;
  values: Record<string, unknown>;
  /**
   * false for a statement of one of many rare shapes (the list's renewal filters and
   * sorts: hundreds of combinations): Postgres keeps a named prepared statement in each
   * connection until the connection closes (tens of KB each), so only the few shapes
   * nearly every request uses are prepared there; the others go as unnamed statements.
   * Default true.
   */
  prepareOnServer?: boolean;
}

// Prepared statements, per database object and statement name: Drizzle builds each
// statement's SQL once (not on every call) and postgres.js sends it as a named prepared
// statement, so Postgres parses and plans it once per connection. Behind a transaction-
// mode pooler (DATABASE_PREPARE=false) postgres.js sends unnamed statements instead; the
// SQL text is still built only once.
type Prepared = { execute(values?: Record<string, unknown>): Promise<unknown> };
const PREPARED = new WeakMap<Database, Map<string, Prepared>>();
// Statement names are bounded by the shapes of the queries (number of organisations,
// filters); the bound only guards against a pathological caller.
const MAX_PREPARED_PER_DATABASE = 1000;

/** Runs a statement, prepared once per database handle and statement name. */
export function runStatement<TResult>(db: Database, statement: Statement<TResult>): Promise<TResult> {
  let cache = PREPARED.get(db);
  if (!cache) {
    cache = new Map();
    PREPARED.set(db, cache);
  }
  let prepared = cache.get(statement.name);
  if (!prepared) {
    if (cache.size >= MAX_PREPARED_PER_DATABASE) cache.clear();
    // Drizzle names the statement for postgres.js only when given a name: without one, the
    // SQL text is still built once here, and each execution is an unnamed statement.
    prepared = statement.build(db).prepare((statement.prepareOnServer === false ? undefined : statement.name) as string);
    cache.set(statement.name, prepared);
  }
  return prepared.execute(statement.values) as Promise<TResult>;
}
