import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import postgres from 'postgres';
import { sql } from 'drizzle-orm';
import { executeRows, migrateDatabase, openPostgres, type DatabaseHandle } from '@/db/client';
import { DEMO_USERS, demoContractRows, seedDemo } from '@/db/seed/demo';
import { clearVerifiedTokenCache } from '@/server/access/tokens';
import { checkSessionSettings } from '@/server/database-settings';
import { getDatabase } from '@/server/database';
import { WebhookWorker } from '@/server/webhooks/worker';
import { apiRequest, PROXY_CLIENT_ADDRESS, send } from '../helpers/api';
import { applyConfig, restoreConfig } from '../helpers/config';
import { captureLogs, type CapturedLogs } from '../helpers/logs';
import { newApiKey } from '../helpers/tokens';
import { pgbouncerMissing, startStockPgbouncer, type StockPgbouncer } from '../helpers/stock-pgbouncer';
import { PRIVATE_OK, receiverEndpoint, startReceiver, WEBHOOK_TEST_ENV } from '../webhooks/support';

/**
 * The app behind a stock PgBouncer 1.18 (Debian's package and default configuration, in
 * transaction mode, no `ignore_startup_parameters`), as a managed pooler runs it: Neon's
 * pooled endpoint and DigitalOcean's refuse any startup parameter outside their list and
 * close the connection.
 *
 * The app's own pool is opened the way the server opens it (server/config.ts and
 * getDatabase, with DATABASE_PREPARE=false and DATABASE_URL_UNPOOLED), as a role of its own
 * that starts with no settings, like a new Neon role.
 */

const missing = pgbouncerMissing();
// The machine's Postgres as a superuser (it creates a role), whatever DATABASE_URL is: the
// suite may itself run through a pooler (npm run test:cluster -- --suite). CI exports it.
const ADMIN_URL = process.env.PG_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const STATEMENT_TIMEOUT_MS = 5_000;

const urlOf = (base: string, options: { user: string; port?: number; database: string }) => {
  const u = new URL(base);
  u.username = options.user;
  u.password = '';
  u.hostname = '127.0.0.1';
  if (options.port) u.port = String(options.port);
  u.pathname = `/${options.database}`;
  return u.toString();
};

describe.skipIf(missing)(`the app behind a stock PgBouncer 1.18 in transaction mode${missing ? ` (${missing})` : ''}`, () => {
  const suffix = `${process.pid}_${randomBytes(3).toString('hex')}`;
  const role = `pooler_app_${suffix}`;
  const database = `pooler_${suffix}`;
  const serverPort = Number(new URL(ADMIN_URL).port || 5432);
  let admin: DatabaseHandle;
  let owner: DatabaseHandle;
  let bouncer: StockPgbouncer;
  let pooledUrl: string;
  let directUrl: string;
  let key: string;
  let logs: CapturedLogs | undefined;
  // The warning's text (the SQL to run) is its `fix` field.
  const warnings = { filter: (keep: (line: string) => boolean) => (logs?.entries ?? []).map((entry) => String(entry.fix ?? '')).filter(keep) };
  const opened: DatabaseHandle[] = [];

  beforeAll(async () => {
    admin = await openPostgres(ADMIN_URL, { max: 1 });
    // A role as a provider creates it: no statement timeout, JIT as the server has it.
    await admin.query(`CREATE ROLE ${role} LOGIN`);
    await admin.query(`CREATE DATABASE ${database} OWNER ${role}`);
    directUrl = urlOf(ADMIN_URL, { user: role, database });
    owner = await openPostgres(directUrl, { max: 1 });
    await migrateDatabase(owner.db, 'postgres');
    await seedDemo(owner.db);
    key = (await newApiKey(owner.db, DEMO_USERS.bob.id, { name: 'pooler' })).key;
    bouncer = await startStockPgbouncer(serverPort, [role]);
    pooledUrl = urlOf(ADMIN_URL, { user: role, port: bouncer.port, database });
    logs = captureLogs('warn');
    await applyConfig({
      ...PROXY_CLIENT_ADDRESS,
      DATABASE_URL: pooledUrl,
      DATABASE_URL_UNPOOLED: directUrl,
      DATABASE_PREPARE: 'false',
      DATABASE_REPLICA_URL: undefined,
      DATABASE_STATEMENT_TIMEOUT_MS: String(STATEMENT_TIMEOUT_MS),
      REDIS_URL: undefined,
      UPSTASH_REDIS_REST_URL: undefined,
      RATE_LIMIT_GENERAL_PER_WINDOW: '100000',
      RATE_LIMIT_EXPORT_PER_WINDOW: '100000',
      ...WEBHOOK_TEST_ENV,
    });
  }, 60_000);

  afterAll(async () => {
    await (await getDatabase().catch(() => undefined))?.close();
    await Promise.all(opened.map((h) => h.close().catch(() => {})));
    await owner?.close();
    await bouncer?.stop();
    await restoreConfig();
    vi.restoreAllMocks();
    logs?.restore();
    if (admin) {
      await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
      await admin.query(`DROP ROLE IF EXISTS ${role}`);
      await admin.close();
    }
  });

  it('its configuration is Debian’s default with only the port, auth and pool mode changed: no ignore_startup_parameters', () => {
    expect(bouncer.ini).toMatch(/^pool_mode = transaction$/m);
    expect(bouncer.ini).not.toMatch(/^ignore_startup_parameters/m);
  });

  it('refuses the startup parameters the app sends when connected directly (statement_timeout, jit, max_parallel_workers_per_gather)', async () => {
    // What openPostgres sends on a direct connection (and once sent behind a pooler too):
    // each of them alone is refused.
    for (const [parameter, connection] of [
      ['statement_timeout', { application_name: 'contract-data-api', statement_timeout: STATEMENT_TIMEOUT_MS }],
      ['jit', { application_name: 'contract-data-api', jit: 'off' }],
      ['max_parallel_workers_per_gather', { application_name: 'contract-data-api', max_parallel_workers_per_gather: '0' }],
    ] as const) {
      const old = postgres(pooledUrl, { max: 1, prepare: false, connect_timeout: 5, onnotice: () => {}, connection });
      await expect(old.unsafe('SELECT 1')).rejects.toThrow(`unsupported startup parameter: ${parameter}`);
      await old.end({ timeout: 1 });
    }
  });

  it('connects with what the app sends now (application_name carried to the server)', async () => {
    const handle = await getDatabase();
    expect(await handle.query("SELECT current_setting('application_name') AS name, current_user AS role")).toEqual([{ name: 'contract-data-api', role }]);
  });

  it('warns at start, naming the SQL to run, when the role has no statement timeout (and JIT and parallel query on)', async () => {
    await getDatabase();
    // What a connection gets without the app's startup parameters (the admin handle sends
    // jit = off itself): the server's own default.
    const plain = postgres(ADMIN_URL, { max: 1, onnotice: () => {} });
    const [server] = await plain<{ jit_available: boolean; parallel: boolean }[]>`
      SELECT pg_jit_available() AND current_setting('jit') = 'on' AS jit_available,
             current_setting('max_parallel_workers_per_gather')::int <> 0 AS parallel`;
    await plain.end({ timeout: 1 });
    const expected =
      `ALTER ROLE "${role}" SET statement_timeout = '5s';` +
      (server!.jit_available ? ` ALTER ROLE "${role}" SET jit = off;` : '') +
      (server!.parallel ? ` ALTER ROLE "${role}" SET max_parallel_workers_per_gather = 0;` : '') +
      ' (new connections take it)';
    await vi.waitFor(() => expect(warnings.filter((w) => w.includes('ALTER ROLE'))).toHaveLength(1), { timeout: 5_000 });
    const [line] = warnings.filter((w) => w.includes('ALTER ROLE'));
    expect(line).toContain(`no statement timeout`);
    expect(line).toContain(`run ${expected}`);
    expect(line).not.toContain('\n');
    // Once per process: later uses of the database do not check again.
    await getDatabase();
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(warnings.filter((w) => w.includes('ALTER ROLE'))).toHaveLength(1);
  });

  const contractId = demoContractRows().find((c) => c.ownerId === DEMO_USERS.bob.id && !c.organizationId)!.id!;

  it('serves the list, get-one and the export through it', async () => {
    clearVerifiedTokenCache();
    const list = await send(apiRequest('GET', '/contracts?limit=5', { key }));
    expect(list.status, list.text).toBe(200);
    expect((list.json as { data: { contracts: unknown[] } }).data.contracts.length).toBeGreaterThan(0);
    const one = await send(apiRequest('GET', `/contracts/${contractId}`, { key }));
    expect(one.status, one.text).toBe(200);
    expect((one.json as { data: { contract: { id: string } } }).data.contract.id).toBe(contractId);
    const exported = await send(apiRequest('POST', '/contracts/export', { key, body: '{}' }));
    expect(exported.status, exported.text).toBe(200);
    expect(exported.text.split('\n').filter(Boolean).length).toBeGreaterThan(1);
  });

  it('runs the app’s transactions (a new API key) through it', async () => {
    const { db } = await getDatabase();
    const created = await newApiKey(db, DEMO_USERS.bob.id, { name: 'made through the pooler' });
    clearVerifiedTokenCache();
    const answer = await send(apiRequest('GET', '/contracts?limit=1', { key: created.key }));
    expect(answer.status, answer.text).toBe(200);
  });

  it('bounds each statement of a transaction with SET LOCAL, which ends with the transaction', async () => {
    // One connection, so that the statement after the transaction runs where it ran.
    const pool = await openPostgres(pooledUrl, { max: 1, prepare: false, statementTimeoutMs: 300 });
    opened.push(pool);
    const started = performance.now();
    await expect(pool.db.transaction((tx) => executeRows(tx, sql`SELECT pg_sleep(3)`))).rejects.toMatchObject({ cause: { code: '57014' } });
    expect(performance.now() - started).toBeLessThan(2_000);
    const inside = await pool.db.transaction((tx) => executeRows<{ timeout: string }>(tx, sql`SELECT current_setting('statement_timeout') AS timeout`));
    expect(inside).toEqual([{ timeout: '300ms' }]);
    // Nothing stays on the server connection for the pooler's next client.
    expect(await pool.query("SELECT current_setting('statement_timeout') AS timeout")).toEqual([{ timeout: '0' }]);
  });

  it('hears NOTIFY on the unpooled URL (LISTEN through the pooler hears nothing)', async () => {
    const handle = await getDatabase();
    const throughPooler = await openPostgres(pooledUrl, { max: 1, prepare: false });
    opened.push(throughPooler);
    const heard = { unpooled: 0, pooled: 0 };
    const stopUnpooled = await handle.listen('cda_pooler_test', () => heard.unpooled++);
    const stopPooled = await throughPooler.listen('cda_pooler_test', () => heard.pooled++);
    // Sent through the pooler, as the app sends its notifications.
    await handle.query("SELECT pg_notify('cda_pooler_test', '')");
    await vi.waitFor(() => expect(heard.unpooled).toBe(1), { timeout: 2_000 });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(heard.pooled).toBe(0);
    await stopUnpooled();
    await stopPooled();
    // The LISTEN connection is the unpooled one, outside the pooler.
    const listeners = await admin.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM pg_stat_activity WHERE usename = $1 AND application_name = 'contract-data-api listen'",
      [role],
    );
    expect(listeners[0]!.n).toBe(1);
  });

  it('runs the webhook worker through it, woken at once by a NOTIFY it hears on the unpooled URL', async () => {
    const handle = await getDatabase();
    const receiver = await startReceiver();
    // Polling once a minute: only the notification can wake it within the few seconds below.
    const worker = new WebhookWorker({ handle, policy: PRIVATE_OK, pollIntervalMs: 60_000, log: () => {} });
    try {
      await receiverEndpoint(handle.db, DEMO_USERS.alice.id, receiver);
      worker.start();
      // Its first pass (nothing to send) and its LISTEN.
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      const contract = demoContractRows().find((c) => c.ownerId === DEMO_USERS.alice.id && !c.organizationId && c.status === 'completed')!;
      // Written by another connection, as the extraction pipeline would.
      await owner.query('UPDATE contracts SET title = $1, updated_at = now() WHERE id = $2', ['Renamed behind the pooler', contract.id]);
      const [request] = await receiver.waitFor(1, 5_000);
      expect(JSON.parse(request!.body)).toMatchObject({ type: 'contract.updated' });
    } finally {
      await worker.stop();
      await receiver.close();
    }
  });

  it('is silent at start once the role carries the settings', async () => {
    await admin.query(`ALTER ROLE ${role} SET statement_timeout = '5s'`);
    await admin.query(`ALTER ROLE ${role} SET jit = off`);
    await admin.query(`ALTER ROLE ${role} SET max_parallel_workers_per_gather = 0`);
    // A role's settings reach new sessions: the maintenance database is a pool PgBouncer
    // opens now, with new server connections.
    const fresh = await openPostgres(urlOf(ADMIN_URL, { user: role, port: bouncer.port, database: 'postgres' }), { max: 1, prepare: false });
    opened.push(fresh);
    const lines: string[] = [];
    expect(await checkSessionSettings(fresh, STATEMENT_TIMEOUT_MS, (line) => lines.push(line))).toBe('as wanted');
    expect(lines).toEqual([]);
    // And it still warns when the role's timeout differs from DATABASE_STATEMENT_TIMEOUT_MS.
    expect(await checkSessionSettings(fresh, 2_500, (line) => lines.push(line))).toBe('warned');
    expect(lines[0]).toContain(`a statement timeout of 5000 ms instead of DATABASE_STATEMENT_TIMEOUT_MS's 2500 ms`);
    expect(lines[0]).toContain(`run ALTER ROLE "${role}" SET statement_timeout = '2500ms';`);
  });
});
