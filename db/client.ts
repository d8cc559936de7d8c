import 'server-only';
import path from 'node:path';
import { mkdir } from 'node:fs/promises';
import { Column, is, SQL, Subquery } from 'drizzle-orm';
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
import type { Sql, TransactionSql } from 'postgres';
import { postgresJsUrl } from './connection-url';
import * as schema from './schema';
import { nameStatement, statementStarted, watched } from './statement-hook';

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

/** How a pool is opened (server/config.ts decides it from the environment). */
export interface PostgresOptions {
  max?: number;
  prepare?: boolean;
  statementTimeoutMs?: number;
  applicationName?: string;
  /**
   * The pool reaches Postgres through a pooler (PgBouncer, Neon's pooled endpoint,
   * Supabase's, DigitalOcean's): it sends no startup parameter beyond user, database,
   * application_name and client_encoding, which every pooler accepts. Default: without
   * named statements (`prepare: false`) the pool is taken to sit behind one.
   */
  behindPooler?: boolean;
  /**
   * Where LISTEN connects: the unpooled URL of the same database (DATABASE_URL_UNPOOLED).
   * A transaction pooler accepts LISTEN and hands the session back to its pool, so the
   * listener would hear nothing. Default: the pool's own URL (today's behaviour).
   */
  listenUrl?: string;
}

/** A postgres.js pool. One per process: the caller keeps it. */
export async function openPostgres(url: string, options: PostgresOptions = {}): Promise<DatabaseHandle> {
  const { default: postgres } = await import('postgres');
  const { drizzle } = await import('drizzle-orm/postgres-js');
  const behindPooler = options.behindPooler ?? options.prepare === false;
  const applicationName = options.applicationName ?? 'contract-data-api';
  // Neon's URLs carry libpq-only keywords that postgres.js would send as startup parameters.
  const pool = postgres(postgresJsUrl(url), {
    max: options.max ?? 10,
    prepare: options.prepare ?? true,
    // Idle connections are closed so that a database restart heals on its own.
    idle_timeout: 30,
    connect_timeout: 5,
    backoff: reconnectBackoff,
    onnotice: () => {},
    // postgres.js fetches the server's array types when a connection opens. Behind a pooler
    // that fetch can fail (PgBouncer refusing while its server is down): postgres.js then
    // reports an unhandled rejection and never fetches them on that connection, so
    // statements the API runs pass no array parameters (db/queries/access.ts).
    connection: behindPooler ? { application_name: applicationName } : directSessionSettings(applicationName, options.statementTimeoutMs),
  });
  // Without named statements the pool is taken to sit behind a transaction-mode pooler.
  let client = options.prepare === false ? withoutPipelining(pool) : pool;
  if (behindPooler && options.statementTimeoutMs) client = withTransactionTimeout(client, options.statementTimeoutMs);
  const opened: { db?: Database } = {};
  client = watchedStatements(client, () => opened.db);
  const db = drizzle({ client, schema, casing: undefined });
  opened.db = db as unknown as Database;
  const listener = options.listenUrl ? listenerOn(postgres, options.listenUrl, applicationName) : undefined;
  const handle: DatabaseHandle = {
    db: db as unknown as Database,
    driver: 'postgres',
    query: async <T>(text: string, params: unknown[] = []) =>
      (await client.unsafe(text, params as never[])) as unknown as T[],
    listen: async (channel, onNotify) => {
      const { unlisten } = await (listener?.get() ?? pool).listen(channel, () => onNotify());
      return unlisten;
    },
    close: async () => {
      await Promise.all([pool.end({ timeout: 5 }), listener?.close()]);
    },
  };
  POSTGRES_HANDLES.set(handle.db, handle);
  return handle;
}

// Seconds before a connection tries again after its last attempt failed; `retries` counts
// the pool's failures since its last success. postgres.js's default grows to 20 s, so a
// dozen refusals into an outage a request waits 10-20 s before it even tries, and so may
// the first one after the database is back. 0.1, 0.2, 0.4, then 0.5 s at most: queued
// requests wait one backoff each. The jitter (half to all of it) keeps the connections of
// every instance from reconnecting in step.
const reconnectBackoff = (retries: number) => Math.min(0.05 * 2 ** retries, 0.5) * (0.5 + Math.random() / 2);

/**
 * The session settings a direct connection sends as startup parameters: no round trip,
 * and set before the first statement. A pooler refuses startup parameters it does not
 * know ("unsupported startup parameter"), so behind one none of these is sent: the role
 * carries them there, checked at start (server/database-settings.ts).
 */
function directSessionSettings(applicationName: string, statementTimeoutMs: number | undefined): Record<string, string | number> {
  return {
    application_name: applicationName,
    ...(statementTimeoutMs ? { statement_timeout: statementTimeoutMs } : {}),
    // No JIT compiling: the list's statements are many small index walks whose estimated
    // cost can pass jit_above_cost, and compiling them took 135 to 155 ms for a page that
    // runs in 13 to 65 ms (docs/query-plans.md).
    jit: 'off',
    // No parallel query: every statement of the API reads a few rows, and Postgres planned
    // some (a count of updated_since with a status, a Parallel Append over the counter
    // tables and contracts) as a Gather over two workers, whose start cost 40 to 50 ms
    // here for 5 to 20 ms of work (docs/query-plans.md). Migration 0016 kept contracts'
    // own scans serial; this covers every plan. A string: postgres.js leaves out a falsy value.
    max_parallel_workers_per_gather: '0',
  };
}

/**
 * The LISTEN connection on its own URL (the unpooled one): a postgres.js instance of at
 * most one connection, made on the first `listen` (postgres.js's `listen` keeps one
 * connection of its own for every channel of an instance). It sends no session setting:
 * it runs no statement but LISTEN.
 */
function listenerOn(postgres: PostgresFactory, url: string, applicationName: string) {
  let opened: Sql | undefined;
  return {
    get: (): Sql =>
      (opened ??= postgres(postgresJsUrl(url), {
        max: 1,
        connect_timeout: 5,
        backoff: reconnectBackoff,
        onnotice: () => {},
        connection: { application_name: `${applicationName} listen` },
      })),
    close: async () => opened?.end({ timeout: 5 }),
  };
}

type PostgresFactory = typeof import('postgres');

/**
 * The client with every statement sent through it told to the statement hooks
 * (db/statement-hook.ts: a span each when tracing, statements in flight when counting):
 * its `unsafe`, by which Drizzle sends everything (builders, prepared statements,
 * `execute`, migrations) and `query` too, and the same on each transaction's and
 * savepoint's connection. With tracing and metrics off a statement costs two reads of
 * globalThis here.
 */
function watchedStatements<S extends Sql | TransactionSql>(client: S, dbOf: () => Database | undefined): S {
  // The client's own methods, taken once: the wrappers call these, never what the property
  // holds at call time (a test's spy set on the proxy lands on the client and calls the
  // wrapper back: reading the property again would recurse).
  const base = {
    unsafe: client.unsafe as (text: string, ...rest: unknown[]) => PromiseLike<unknown>,
    begin: (client as Sql).begin as (...args: unknown[]) => unknown,
    savepoint: (client as TransactionSql).savepoint as ((...args: unknown[]) => unknown) | undefined,
  };
  const unsafe = ((text: string, ...rest: unknown[]) => {
    const query = base.unsafe.call(client, text, ...rest);
    const done = statementStarted(dbOf(), text);
    return done ? watched(query, done) : query;
  }) as Sql['unsafe'];
  type Scope = (tx: TransactionSql) => unknown;
  const scoped = (args: unknown[]) => args.map((arg) => (typeof arg === 'function' ? (tx: TransactionSql) => (arg as Scope)(watchedStatements(tx, dbOf)) : arg));
  const begin = (...args: unknown[]) => base.begin.call(client, ...scoped(args));
  const savepoint = (...args: unknown[]) => base.savepoint!.call(client, ...scoped(args));
  const wrappers: Record<string | symbol, { original: unknown; wrapper: unknown }> = {
    unsafe: { original: base.unsafe, wrapper: unsafe },
    begin: { original: base.begin, wrapper: begin },
    savepoint: { original: base.savepoint, wrapper: savepoint },
  };
  return new Proxy(client, {
    // The wrapper while the property still holds the client's own method; whatever was
    // put there since (a spy that ends up calling the wrapper) as it is.
    get: (target, property, receiver) => {
      const value = Reflect.get(target, property, receiver);
      const wrapped = wrappers[property];
      return wrapped && value !== undefined && value === wrapped.original ? wrapped.wrapper : value;
    },
  });
}

/** The same for PGlite: its `query`, and that of each transaction (Drizzle's two ways in). */
export function watchPglite(client: PGliteClient, dbOf: () => Database | undefined): void {
  const watchQuery = (target: { query: PGliteClient['query'] }) => {
    const query = target.query.bind(target);
    target.query = ((text: string, ...rest: unknown[]) => {
      const done = statementStarted(dbOf(), text);
      const running = (query as (text: string, ...rest: unknown[]) => Promise<unknown>)(text, ...rest);
      return done ? watched(running, done) : running;
    }) as PGliteClient['query'];
  };
  watchQuery(client);
  const transaction = client.transaction.bind(client);
  client.transaction = ((scope: (tx: Parameters<Parameters<PGliteClient['transaction']>[0]>[0]) => Promise<unknown>) =>
    transaction((tx) => {
      watchQuery(tx);
      return scope(tx);
    })) as PGliteClient['transaction'];
}
type PGliteClient = import('@electric-sql/pglite').PGlite;

/**
 * Behind a pooler, every transaction begins with `SET LOCAL statement_timeout`: the
 * statement bound no longer travels with the connection, and a transaction is where a
 * statement can wait on a lock while holding others (and a server connection of the
 * pooler). The SET is written at once with the transaction's first statement, on the
 * transaction's own connection, so it costs no round trip of its own; its effect ends
 * with the transaction, so nothing leaks into the pooler's next client. Statements
 * outside a transaction (the list, get-one) rely on the role's setting, which the app
 * checks at start, and on the request deadline (server/http/deadline.ts).
 */
function withTransactionTimeout(pool: Sql, statementTimeoutMs: number): Sql {
  const setting = `SET LOCAL statement_timeout = ${Math.trunc(statementTimeoutMs)}`;
  type Scope = (tx: TransactionSql) => unknown;
  const begin = (optionsOrScope: string | Scope, maybeScope?: Scope) => {
    const [options, scope] = typeof optionsOrScope === 'function' ? ['', optionsOrScope] : [optionsOrScope, maybeScope!];
    return pool.begin(options, (tx) => {
      // Not awaited: a failure aborts the transaction, and postgres.js reports it as the
      // transaction's error.
      tx.unsafe(setting).catch(() => {});
      return scope(tx);
    });
  };
  return new Proxy(pool, { get: (target, property, receiver) => (property === 'begin' ? begin : Reflect.get(target, property, receiver)) });
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
  // on the unpooled URL when there is one: a transaction pooler cannot serve it).
  return new Proxy(pool, { get: (target, property, receiver) => (property === 'unsafe' ? unsafe : Reflect.get(target, property, receiver)) });
}

/**
 * The handle of a postgres.js pool's Database: code that holds only the Database (the key
 * cache) can listen for notifications that other processes send through Postgres.
 *
 * On globalThis: Next.js bundles this module once per layer (instrumentation, where the
 * webhook worker opens the process's database at start, and the routes), and a map of one
 * copy would not know the handles the other opened: the routes' key cache then took the
 * database for one it cannot listen on, and a revocation made elsewhere reached it only
 * through the Redis markers or the 30 s cache (tests/cluster/listen.test.ts).
 */
const HANDLES_KEY = Symbol.for('contract-data-api.postgres-handles');
const POSTGRES_HANDLES: WeakMap<Database, DatabaseHandle> = ((globalThis as typeof globalThis & { [HANDLES_KEY]?: WeakMap<Database, DatabaseHandle> })[
  HANDLES_KEY
] ??= new WeakMap());
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
  // PGlite makes the data directory but not its parents: `npm run apikey` or `db:seed` on a
  // fresh clone (no .data/ yet), or a PGLITE_DIR of new folders, would fail with ENOENT.
  if (dir && !dir.includes('://')) await mkdir(dir, { recursive: true });
  const client = await PGlite.create({
    dataDir: dir,
    loadDataDir: options.loadDataDir,
    extensions: await pgliteExtensions(),
  });
  const opened: { db?: Database } = {};
  watchPglite(client, () => opened.db);
  const db = drizzle({ client, schema }) as unknown as Database;
  opened.db = db;
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
  /** The same database without a pooler in between: where LISTEN connects. */
  unpooledUrl?: string;
  poolMax: number;
  prepare: boolean;
  /** Why `url` is taken to be a pooler (undefined: a direct connection). */
  pooler?: string;
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
      behindPooler: settings.pooler !== undefined,
      listenUrl: settings.unpooledUrl,
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
// On globalThis, as POSTGRES_HANDLES: Next.js may evaluate this module once per bundle
// layer, and the layer that opened the replica is not always the one that reads from it.
const FALLBACKS_KEY = Symbol.for('contract-data-api.database-fallbacks');
const FALLBACKS: WeakMap<Database, Fallback> = ((globalThis as typeof globalThis & { [FALLBACKS_KEY]?: WeakMap<Database, Fallback> })[FALLBACKS_KEY] ??= new WeakMap());

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
    // Its spans are named after it (db/statement-hook.ts).
    const text = (prepared as { queryString?: string }).queryString;
    if (text) nameStatement(text, statement.name);
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
