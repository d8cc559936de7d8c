import 'server-only';
import path from 'node:path';
import { Column, is, SQL, Subquery } from 'drizzle-orm';
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
import type { Sql } from 'postgres';
import { postgresJsUrl } from './connection-url';
import * as schema from './schema';

/**
 * Opening a database and running statements on it. This layer takes its settings as
 * arguments and imports nothing from server/: the process-wide handle, built from the
 * configuration, lives in server/database.ts.
 */

/** The one database type every data-access function takes: the same on both drivers. */
export type Database = PgDatabase<PgQueryResultHKT, typeof schema>;

export interface DatabaseHandle {
  db: Database;
  driver: 'postgres' | 'pglite';
  /** Runs one raw statement with parameters (tools and tests; the app uses Drizzle). */
  query<T = Record<string, unknown>>(text: string, params?: unknown[]): Promise<T[]>;
  /**
   * Calls `onNotify` on every NOTIFY of `channel` (postgres.js: on a connection of its own;
   * PGlite: in process). Resolves to a function that stops listening.
   */
  listen(channel: string, onNotify: () => void): Promise<() => Promise<void>>;
  close(): Promise<void>;
}

export const MIGRATIONS_FOLDER = path.join(process.cwd(), 'db', 'migrations');

/** A postgres.js pool. One per process: the caller keeps it. */
export async function openPostgres(
  url: string,
  options: { max?: number; prepare?: boolean; statementTimeoutMs?: number; applicationName?: string } = {},
): Promise<DatabaseHandle> {
  const { default: postgres } = await import('postgres');
  const { drizzle } = await import('drizzle-orm/postgres-js');
  // Neon's URLs carry libpq-only keywords that postgres.js would send as startup parameters.
  const pool = postgres(postgresJsUrl(url), {
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
    // postgres.js fetches the server's array types when a connection opens. Behind a pooler
    // that fetch can fail (PgBouncer refusing while its server is down): postgres.js then
    // reports an unhandled rejection and never fetches them on that connection, so
    // statements the API runs pass no array parameters (db/queries/access.ts).
    connection: {
      application_name: options.applicationName ?? 'contract-data-api',
      ...(options.statementTimeoutMs ? { statement_timeout: options.statementTimeoutMs } : {}),
      // No JIT compiling: the list's statements are many small index walks whose estimated
      // cost can pass jit_above_cost, and compiling them took 135 to 155 ms for a page that
      // runs in 13 to 65 ms (docs/query-plans.md). Not sent behind a transaction pooler
      // (DATABASE_PREPARE=false), which refuses startup parameters it does not know: set it
      // on the database role there, as the statement timeout (README, Deploying).
      ...(options.prepare === false ? {} : { jit: 'off' }),
    },
  });
  // Without named statements the pool is taken to sit behind a transaction-mode pooler.
  const client = options.prepare === false ? withoutPipelining(pool) : pool;
  const db = drizzle({ client, schema, casing: undefined });
  const handle: DatabaseHandle = {
    db: db as unknown as Database,
    driver: 'postgres',
    query: async <T>(text: string, params: unknown[] = []) =>
      (await client.unsafe(text, params as never[])) as unknown as T[],
    listen: async (channel, onNotify) => {
      const { unlisten } = await client.listen(channel, () => onNotify());
      return unlisten;
    },
    close: () => pool.end({ timeout: 5 }),
  };
  POSTGRES_HANDLES.set(handle.db, handle);
  return handle;
}

/**
 * The pool, with no query ever written to a connection that is still busy: behind a
 * transaction-mode pooler a pipelined query can lose its answer.
 *
 * When every connection is busy, postgres.js writes the next query to one whose query
 * went out whole and unanswered (a query without parameters) rather than queue it. A
 * query with parameters and no named statement goes out as Parse + Describe + Flush, and
 * its Bind/Execute/Sync only once the description is back. PgBouncer 1.18 hands the
 * server connection back to its pool at the first query's ReadyForQuery, so the second's
 * answers reach no client (PgBouncer logs "got packet '1' from server when not linked")
 * and it waits until the request deadline: a 503 (docs/reliability.md). The replica probe's
 * `SELECT pg_current_wal_lsn()` was such a first query.
 *
 * postgres.js's `max_pipeline: 0` would stop it, and with it `begin` (its connection is
 * reserved by the `onexecute` callback that the same check then skips: UNSAFE_TRANSACTION).
 * Instead each query of `unsafe` (Drizzle's and `query`'s way in) says through that
 * callback that its connection takes nothing more until it answers; the others wait in
 * the pool. A transaction's own connection is reserved and never shared anyway.
 * tests/cluster/pooler.test.ts.
 */
function withoutPipelining(pool: Sql): Sql {
  const unsafe: Sql['unsafe'] = (query, parameters, queryOptions) => {
    // postgres.js also takes (query, options): keep that reading, since three arguments are passed on.
    const [values, options] = parameters === undefined || Array.isArray(parameters) ? [parameters ?? [], queryOptions] : [[], parameters as typeof queryOptions];
    return pool.unsafe(query, values, { ...options, onexecute: () => false } as typeof queryOptions);
  };
  // Not covered, and not used on this pool: queries written as tagged templates on the pool
  // itself, `reserve()`, and the LISTEN connection (a postgres.js instance of its own,
  // which a transaction pooler cannot serve anyway).
  return new Proxy(pool, { get: (target, property, receiver) => (property === 'unsafe' ? unsafe : Reflect.get(target, property, receiver)) });
}

/**
 * The handle of a postgres.js pool's Database: code that holds only the Database (the key
 * cache) can listen for notifications that other processes send through Postgres.
 */
const POSTGRES_HANDLES = new WeakMap<Database, DatabaseHandle>();
export const postgresHandleOf = (db: Database): DatabaseHandle | undefined => POSTGRES_HANDLES.get(db);

/** The extensions the migrations create (pg_trgm, for substring search), for PGlite to load. */
export async function pgliteExtensions() {
  const { pg_trgm } = await import('@electric-sql/pglite/contrib/pg_trgm');
  return { pg_trgm };
}

/** An embedded PGlite database in `dir` (or in memory without one), migrated. */
export async function openPglite(dir?: string, options: { loadDataDir?: Blob; migrationsFolder?: string } = {}): Promise<DatabaseHandle> {
  const { PGlite } = await import('@electric-sql/pglite');
  const { drizzle } = await import('drizzle-orm/pglite');
  const client = await PGlite.create({
    dataDir: dir,
    loadDataDir: options.loadDataDir,
    extensions: await pgliteExtensions(),
  });
  const db = drizzle({ client, schema }) as unknown as Database;
  await migrateDatabase(db, 'pglite', options.migrationsFolder);
  return {
    db,
    driver: 'pglite',
    query: async <T>(text: string, params: unknown[] = []) => (await client.query<T>(text, params)).rows,
    listen: (channel, onNotify) => client.listen(channel, () => onNotify()),
    close: () => client.close(),
  };
}

/** Applies the committed SQL migrations (idempotent: applied ones are skipped). */
export async function migrateDatabase(db: Database, driver: DatabaseHandle['driver'], migrationsFolder = MIGRATIONS_FOLDER) {
  if (driver === 'pglite') {
    const { migrate } = await import('drizzle-orm/pglite/migrator');
    await migrate(db as never, { migrationsFolder });
  } else {
    const { migrate } = await import('drizzle-orm/postgres-js/migrator');
    await migrate(db as never, { migrationsFolder });
  }
}

/** What opening the database needs (server/config.ts reads it from the environment). */
export interface DatabaseSettings {
  /** postgres://… ; without it, the embedded PGlite database in `pgliteDir`. */
  url?: string;
  poolMax: number;
  prepare: boolean;
  statementTimeoutMs: number;
  pgliteDir: string;
}

/** Opens Postgres when a URL is given, else the embedded PGlite database (migrated). */
export async function openDatabase(settings: DatabaseSettings): Promise<DatabaseHandle> {
  if (settings.url) {
    return openPostgres(settings.url, {
      max: settings.poolMax,
      prepare: settings.prepare,
      statementTimeoutMs: settings.statementTimeoutMs,
    });
  }
  return openPglite(settings.pgliteDir);
}

/**
 * Runs a statement written in SQL (what Drizzle's builders cannot say: data-modifying CTEs,
 * SKIP LOCKED claims) and returns its rows, whichever the driver: postgres.js answers an
 * array, PGlite `{ rows }`. Return only text, uuid, integer and boolean columns from it:
 * the two drivers parse other types differently.
 */
export async function executeRows<T>(db: Database, query: SQL): Promise<T[]> {
  const result = (await db.execute(query)) as unknown;
  return (Array.isArray(result) ? result : (result as { rows: T[] }).rows) as T[];
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

/**
 * A database whose statements, when they fail in a way `shouldRetry` recognises (it could
 * not be reached), run again on `fallback`: a read replica in front of its primary. The
 * caller learns of the failure through `onFailure` (and stops sending reads there).
 */
interface Fallback {
  fallback: Database;
  shouldRetry(error: unknown): boolean;
  onFailure(error: unknown): void;
}
const FALLBACKS = new WeakMap<Database, Fallback>();

export function setFallback(db: Database, fallback: Fallback): void {
  FALLBACKS.set(db, fallback);
}

/** Runs a statement, prepared once per database handle and statement name (on its fallback if it cannot be reached). */
export async function runStatement<TResult>(db: Database, statement: Statement<TResult>): Promise<TResult> {
  const fallback = FALLBACKS.get(db);
  if (!fallback) return runPrepared(db, statement);
  try {
    return await runPrepared(db, statement);
  } catch (error) {
    if (!fallback.shouldRetry(error)) throw error;
    fallback.onFailure(error);
    return runPrepared(fallback.fallback, statement);
  }
}

function runPrepared<TResult>(db: Database, statement: Statement<TResult>): Promise<TResult> {
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
    installFlatRowMapper(prepared);
    cache.set(statement.name, prepared);
  }
  return prepared.execute(statement.values) as Promise<TResult>;
}

// Row mapping -------------------------------------------------------------------------------

/** What a Drizzle select's prepared query holds about its result (the same on both drivers). */
interface SelectedField {
  path: string[];
  field: unknown;
}
interface MappedPrepared {
  fields?: SelectedField[];
  joinsNotNullableMap?: Record<string, boolean>;
  customResultMapper?: (rows: unknown[][]) => unknown;
}
type Decoder = { mapFromDriverValue(value: unknown): unknown };

/**
 * A row mapper for a flat selection (every field a column or a SQL expression, none in a
 * nested object), compiled once per prepared statement, or undefined for any other shape.
 *
 * Drizzle maps each row of each execution with its generic mapResultRow, which works out
 * every field's decoder again for every row (an `is()` prototype walk per field: a tenth
 * of a millisecond of a 50-row list page). This does exactly what mapResultRow does for a
 * flat selection, with the decoders chosen once: a null stays null, anything else goes
 * through the field's own mapFromDriverValue, keys in the same order. (mapResultRow's
 * other work, nested objects and the nulling of left-joined tables, only concerns fields
 * two levels deep, which a flat selection has none of.) Drizzle's prepared queries of both
 * drivers call a `customResultMapper` with the raw rows, as arrays, instead of mapping them.
 * tests/db/row-mapper.test.ts holds the result against Drizzle's own mapping.
 */
export function flatRowMapper(fields: readonly SelectedField[] | undefined): ((rows: unknown[][]) => Record<string, unknown>[]) | undefined {
  if (!fields || fields.length === 0 || fields.some((f) => f.path.length !== 1)) return undefined;
  const keys = fields.map((f) => f.path[0]!);
  // The decoder of each field, chosen as mapResultRow chooses it.
  const decoders = fields.map(({ field }): Decoder | undefined => {
    if (is(field, Column)) return field as unknown as Decoder;
    // A SQL expression's decoder is internal to Drizzle (mapResultRow reads it so too).
    type WithDecoder = { decoder?: Decoder };
    if (is(field, SQL)) return (field as unknown as WithDecoder).decoder;
    if (is(field, Subquery)) return (field as unknown as { _: { sql: WithDecoder } })._.sql.decoder;
    return (field as { sql?: WithDecoder }).sql?.decoder;
  });
  if (decoders.some((d) => typeof d?.mapFromDriverValue !== 'function')) return undefined;
  const n = keys.length;
  return (rows) =>
    rows.map((row) => {
      const out: Record<string, unknown> = {};
      for (let i = 0; i < n; i++) {
        const raw = row[i];
        out[keys[i]!] = raw === null ? null : decoders[i]!.mapFromDriverValue(raw);
      }
      return out;
    });
}

/** Installs the flat mapper on a prepared select (a no-op for other queries and shapes). */
function installFlatRowMapper(prepared: Prepared): void {
  const query = prepared as Prepared & MappedPrepared;
  if (query.customResultMapper) return;
  const mapper = flatRowMapper(query.fields);
  if (mapper) query.customResultMapper = mapper;
}
