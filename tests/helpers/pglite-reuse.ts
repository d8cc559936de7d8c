import type { PGlite } from '@electric-sql/pglite';
import { drizzle } from 'drizzle-orm/pglite';
import { pgliteExtensions, watchPglite, type Database, type DatabaseHandle } from '@/db/client';
import * as schema from '@/db/schema';

/**
 * The in-memory PGlite databases of a worker, used again by its next test files. Loading
 * the migrated template into a new PGlite costs about a second of CPU per test file (most
 * of what a file paid before its first test); emptying the tables of one that a finished
 * file gave back costs a few milliseconds. What the next file gets is the template's state:
 *
 * - every table emptied (TRUNCATE … RESTART IDENTITY, triggers off, so that the append-only
 *   tables' guards and the counters' TRUNCATE triggers do not run), the planner's statistics
 *   dropped (plans are those of a fresh database), the session reset (DISCARD ALL: settings,
 *   LISTEN, prepared statements, temporary tables);
 * - the catalog compared with the template's (tables, columns, indexes, constraints,
 *   functions, triggers, roles, extensions, database settings, applied migrations): a file
 *   that changed anything of it gives back a database that is closed instead;
 * - the client's own methods put back (a spy a file left on `query` goes with it);
 * - the finished file's handle refuses every statement ("closed"), as a closed PGlite would:
 *   a timer of that file that fires later cannot write into the next file's data.
 *
 * Only the shared project (vitest.config.ts) uses it (CDA_TEST_REUSE_DATABASES): there a
 * worker keeps its modules, and so this pool, from one file to the next; an isolated file's
 * databases are closed with it.
 */

interface Instance {
  client: PGlite;
  /** The catalog's digest when the instance was opened from the template. */
  fingerprint: string;
  /** The client's own function properties when opened (after watchPglite). */
  methods: Map<PropertyKey, unknown>;
  /** The lease's Drizzle database, for the statement observer (metrics' statements in flight). */
  current?: Database;
}

/** At most this many idle databases per worker (a file that opens two gives both back). */
const POOL_SIZE = 2;
/** A finished file may leave a transaction open (its test gave up on it): no reset waits for it longer. */
const RESET_BUDGET_MS = 5_000;

const idle: Instance[] = [];

const FINGERPRINT = `
  SELECT md5(string_agg(item, E'\\n' ORDER BY item)) AS digest FROM (
    SELECT 'rel ' || n.nspname || '.' || c.relname || ' ' || c.relkind::text FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname NOT IN ('pg_catalog', 'information_schema', 'pg_toast') AND n.nspname NOT LIKE 'pg_temp%' AND n.nspname NOT LIKE 'pg_toast_temp%'
    UNION ALL SELECT 'col ' || a.attrelid::regclass::text || '.' || a.attname || ' ' || format_type(a.atttypid, a.atttypmod) || ' ' || a.attnotnull || ' ' || coalesce(pg_get_expr(d.adbin, d.adrelid), '')
      FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
      WHERE n.nspname NOT IN ('pg_catalog', 'information_schema', 'pg_toast') AND c.relkind IN ('r', 'p', 'v', 'm') AND a.attnum > 0 AND NOT a.attisdropped
    UNION ALL SELECT 'index ' || indexdef FROM pg_indexes WHERE schemaname NOT IN ('pg_catalog', 'information_schema')
    UNION ALL SELECT 'constraint ' || conrelid::regclass::text || ' ' || conname || ' ' || pg_get_constraintdef(oid) FROM pg_constraint WHERE connamespace NOT IN ('pg_catalog'::regnamespace, 'information_schema'::regnamespace)
    UNION ALL SELECT 'function ' || p.oid::regprocedure::text || ' ' || md5(p.prosrc) FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname NOT IN ('pg_catalog', 'information_schema')
    UNION ALL SELECT 'trigger ' || tgrelid::regclass::text || ' ' || tgname || ' ' || tgenabled::text FROM pg_trigger WHERE NOT tgisinternal
    UNION ALL SELECT 'role ' || rolname || ' ' || rolsuper FROM pg_roles
    UNION ALL SELECT 'extension ' || extname || ' ' || extversion FROM pg_extension
    UNION ALL SELECT 'setting ' || coalesce(array_to_string(setconfig, ','), '') FROM pg_db_role_setting
    UNION ALL SELECT 'migrations ' || count(*) FROM drizzle.__drizzle_migrations
  ) AS catalog(item)`;

/** A migrated, empty in-memory database: one a finished file gave back, else a new copy of `template`. */
export async function leasePglite(template: Blob): Promise<DatabaseHandle> {
  return lease(idle.pop() ?? (await openInstance(template)));
}

async function openInstance(template: Blob): Promise<Instance> {
  const { PGlite } = await import('@electric-sql/pglite');
  const client = await PGlite.create({ loadDataDir: template, extensions: await pgliteExtensions() });
  const instance: Instance = { client, fingerprint: '', methods: new Map() };
  watchPglite(client, () => instance.current);
  for (const key of Reflect.ownKeys(client)) {
    const value = Reflect.get(client, key);
    if (typeof value === 'function') instance.methods.set(key, value);
  }
  instance.fingerprint = await fingerprint(client);
  return instance;
}

async function fingerprint(client: PGlite): Promise<string> {
  const { rows } = await client.query<{ digest: string }>(FINGERPRINT);
  return rows[0]!.digest;
}

function lease(instance: Instance): DatabaseHandle {
  const { client } = instance;
  let released = false;
  const guarded = new Proxy(client, {
    get(target, property) {
      if (released) throw new Error('The test database is closed (the test file that opened it has ended).');
      const value = Reflect.get(target, property, target) as unknown;
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
  const db = drizzle({ client: guarded, schema }) as unknown as Database;
  instance.current = db;
  const listening: (() => Promise<void>)[] = [];
  return {
    db,
    driver: 'pglite',
    query: async <T>(text: string, params: unknown[] = []) => (await guarded.query<T>(text, params)).rows,
    async listen(channel, onNotify) {
      const stop = await guarded.listen(channel, () => onNotify());
      listening.push(stop);
      return stop;
    },
    async close() {
      if (released) return;
      released = true;
      instance.current = undefined;
      for (const stop of listening.splice(0)) await stop().catch(() => undefined);
      if (idle.length < POOL_SIZE && (await reset(instance))) idle.push(instance);
      else void client.close().catch(() => undefined);
    },
  };
}

/** The template's state again (see the top of this file); false when that cannot be had. */
async function reset(instance: Instance): Promise<boolean> {
  const { client } = instance;
  for (const [key, method] of instance.methods) if (Reflect.get(client, key) !== method) Reflect.set(client, key, method);
  const emptied = (async () => {
    const { rows } = await client.query<{ name: string }>(
      `SELECT format('%I.%I', schemaname, tablename) AS name FROM pg_tables WHERE schemaname NOT IN ('pg_catalog', 'information_schema', 'drizzle')`,
    );
    await client.exec(`SET session_replication_role = replica; TRUNCATE ${rows.map((r) => r.name).join(', ')} RESTART IDENTITY CASCADE; DELETE FROM pg_statistic;`);
    await client.exec('DISCARD ALL');
    return (await fingerprint(client)) === instance.fingerprint;
  })();
  let timer: NodeJS.Timeout | undefined;
  const gaveUp = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), RESET_BUDGET_MS)));
  try {
    return await Promise.race([emptied.catch(() => false), gaveUp]);
  } finally {
    clearTimeout(timer);
  }
}
