import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { openPostgres, runStatement, type Database, type Statement } from '@/db/client';
import { fanOutEvents } from '@/db/queries/webhooks';
import { users } from '@/db/schema';
import { DEMO_PASSWORD, DEMO_USERS } from '@/db/seed/demo';
import { signInWithPasswordLimited } from '@/server/auth/sign-in-limit';
import { ConfigError, parseConfig } from '@/server/config';
import { setProcessDatabase } from '@/server/database';
import { processMetrics } from '@/server/observability/metrics';
import { handleMetricsRequest } from '@/server/health/metrics-endpoint';
import { flushSecurityEvents } from '@/server/security-log/record';
import { flushKeyActivity } from '@/server/usage/recorder';
import { apiRequest, PROXY_CLIENT_ADDRESS, send } from '../helpers/api';
import { applyConfig, configureForFile } from '../helpers/config';
import { parseScrape, type Scrape } from '../helpers/prometheus';
import { createDemoWorld, type DemoWorld } from '../reliability/support/world';
import { awayFromWindowEdge } from '../helpers/window-edge';
import { clearWebhooks, receiverEndpoint, startReceiver, testWorker, WEBHOOK_TEST_ENV, type Receiver } from '../webhooks/support';

/**
 * GET /api/metrics (issue 22, "Metrics"): a 404 without METRICS_TOKEN, a 401 (then 429)
 * without the right bearer token, and with it the Prometheus text, read with a real
 * parser, whose counts match the traffic this file sends through the API's router and
 * the modules that count. On the run's driver (PGlite, or Postgres with Redis).
 */

const TOKEN = randomBytes(32).toString('base64url');
const ENV = {
  ...PROXY_CLIENT_ADDRESS,
  ...WEBHOOK_TEST_ENV,
  METRICS_TOKEN: TOKEN,
  OBSERVABILITY: undefined,
  RATE_LIMIT_EXPORT_PER_WINDOW: '2',
  RATE_LIMIT_AUTH_FAILURES_PER_MINUTE: '5',
  RATE_LIMIT_SIGN_IN_ADDRESS_PER_WINDOW: '2',
  DATABASE_POOL_MAX: '4',
};
configureForFile(ENV);

/** A client address of this test's own (IPv6 counts per /64; 2001:db8::/32 is for documentation). */
const freshAddress = () => `2001:db8:${randomBytes(2).toString('hex')}:${randomBytes(2).toString('hex')}::1`;

function metricsRequest(authorization?: string, address = freshAddress()): Request {
  const headers = new Headers({ 'X-Real-IP': address });
  if (authorization !== undefined) headers.set('Authorization', authorization);
  return new Request('http://localhost:3000/api/metrics', { headers });
}

async function scrape(): Promise<Scrape & { text: string }> {
  const res = await handleMetricsRequest(metricsRequest(`Bearer ${TOKEN}`));
  const text = await res.text();
  expect(res.status, text).toBe(200);
  return Object.assign(parseScrape(text), { text });
}

let world: DemoWorld;
beforeAll(async () => {
  world = await createDemoWorld();
});
afterAll(async () => {
  await world?.handle.close();
});

describe('the route', () => {
  it('does not exist without METRICS_TOKEN, nor with OBSERVABILITY=off: the 404 of an unknown route', async () => {
    try {
      for (const env of [{ METRICS_TOKEN: undefined }, { OBSERVABILITY: 'off' }]) {
        await applyConfig(env);
        for (const authorization of [undefined, `Bearer ${TOKEN}`]) {
          const res = await handleMetricsRequest(metricsRequest(authorization));
          expect(res.status).toBe(404);
          expect(res.headers.get('www-authenticate')).toBeNull();
          const body = (await res.json()) as { error: { code: string; message: string } };
          expect(body.error).toMatchObject({ code: 'not_found', message: 'No such endpoint.' });
        }
      }
    } finally {
      await applyConfig(ENV);
    }
  });

  it('refuses a METRICS_TOKEN under 32 characters at start, without repeating it', () => {
    const short = 'short-metrics-token-1234';
    let error: unknown;
    try {
      parseConfig({ METRICS_TOKEN: short });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toContain('METRICS_TOKEN must be at least 32 characters');
    expect((error as Error).message).not.toContain(short);
    expect(parseConfig({ METRICS_TOKEN: TOKEN }).metricsToken).toBe(TOKEN);
  });

  it('answers 401 with a Bearer challenge to a missing, wrong or differently-schemed token', async () => {
    for (const authorization of [undefined, 'Bearer', `Bearer ${TOKEN}x`, `Bearer ${TOKEN.slice(0, -1)}`, `Basic ${Buffer.from(`x:${TOKEN}`).toString('base64')}`, TOKEN]) {
      const res = await handleMetricsRequest(metricsRequest(authorization));
      const text = await res.text();
      expect(res.status, String(authorization)).toBe(401);
      expect(res.headers.get('www-authenticate')).toBe('Bearer realm="metrics"');
      expect(JSON.parse(text)).toMatchObject({ error: { code: 'unauthorized' } });
      expect(text).not.toContain('http_server_request_duration_seconds');
    }
  });

  it('limits a flood of wrong tokens from one address (429), and still serves the right one there', async () => {
    await awayFromWindowEdge(60, 5000);
    const address = freshAddress();
    const statuses: number[] = [];
    for (let i = 0; i < 8; i++) statuses.push((await handleMetricsRequest(metricsRequest(`Bearer wrong-${i}`, address))).status);
    expect(statuses).toEqual([401, 401, 401, 401, 401, 429, 429, 429]);
    const right = await handleMetricsRequest(metricsRequest(`Bearer ${TOKEN}`, address));
    expect(right.status).toBe(200);
    // Another address is not affected.
    expect((await handleMetricsRequest(metricsRequest('Bearer wrong'))).status).toBe(401);
    const after = await scrape();
    expect(after.value('auth_failed_key_attempts_total', { kind: 'metrics_token' })).toBeGreaterThanOrEqual(9);
  });

  it('serves Prometheus text with the right token: every family typed and explained, named by the rules', async () => {
    const res = await handleMetricsRequest(metricsRequest(`bearer   ${TOKEN}`));
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(res.headers.get('cache-control')).toBe('no-store');
    const { families } = parseScrape(await res.text());
    const ours = [
      ['http_server_request_duration_seconds', 'HISTOGRAM'],
      ['rate_limit_refusals_total', 'COUNTER'],
      ['auth_failed_key_attempts_total', 'COUNTER'],
      ['auth_sign_in_failures_total', 'COUNTER'],
      ['auth_sign_in_refusals_total', 'COUNTER'],
      ['db_pool_connections_in_use', 'GAUGE'],
      ['db_pool_statements_waiting', 'GAUGE'],
      ['db_pool_connections_max', 'GAUGE'],
      ['db_replica_in_use', 'GAUGE'],
      ['db_replica_lag_seconds', 'GAUGE'],
      ['db_statement_timeouts_total', 'COUNTER'],
      ['webhook_queue_depth', 'GAUGE'],
      ['webhook_deliveries_total', 'COUNTER'],
      ['contracts_export_rows_total', 'COUNTER'],
      ['request_log_dropped_total', 'COUNTER'],
      ['security_log_dropped_total', 'COUNTER'],
    ] as const;
    const operations = readFileSync('docs/operations.md', 'utf8');
    for (const [name, type] of ours) {
      expect(families.get(name), name).toMatchObject({ type });
      expect(families.get(name)!.help.length, name).toBeGreaterThan(20);
      // Documented for operators, with its type.
      expect(operations, name).toMatch(new RegExp(`\`${name}\`[^\\n]*\\b${type.toLowerCase()}\\b`));
    }
    // Prometheus' naming rules, on the app's own metrics (prom-client's defaults name a gauge nodejs_active_resources_total).
    for (const family of [...families.values()].filter((f) => !/^(process|nodejs)_/.test(f.name))) {
      expect(family.name).toMatch(/^[a-z_][a-z0-9_]*$/);
      if (family.type === 'COUNTER') expect(family.name).toMatch(/_total$/);
      else expect(family.name).not.toMatch(/_total$/);
      // Base units: seconds and bytes, never milliseconds.
      expect(family.name).not.toMatch(/_(milli|micro)?seconds?_ms|_ms$|milliseconds/);
    }
    // Every bucket, kind and outcome is there from the start, at 0 or more (rate() needs the first sample).
    const scrape0 = parseScrape(await (await handleMetricsRequest(metricsRequest(`Bearer ${TOKEN}`))).text());
    for (const bucket of ['general', 'conditional', 'export', 'calendar', 'auth_failure', 'webhook_manual']) expect(scrape0.has('rate_limit_refusals_total', { bucket }), bucket).toBe(true);
    for (const bucket of ['sign_in_address', 'sign_in_account']) expect(scrape0.has('auth_sign_in_refusals_total', { bucket }), bucket).toBe(true);
    for (const kind of ['api_key', 'calendar_feed', 'metrics_token']) expect(scrape0.has('auth_failed_key_attempts_total', { kind }), kind).toBe(true);
    for (const outcome of ['succeeded', 'failed', 'skipped', 'error']) expect(scrape0.has('webhook_deliveries_total', { outcome }), outcome).toBe(true);
    for (const pool of ['primary', 'replica', 'other']) expect(scrape0.has('db_statement_timeouts_total', { pool }), pool).toBe(true);
    expect(scrape0.has('auth_sign_in_failures_total')).toBe(true);
    expect(scrape0.has('contracts_export_rows_total')).toBe(true);
    // The process's own metrics (prom-client's defaults) come along.
    expect(families.get('process_cpu_user_seconds_total')).toMatchObject({ type: 'COUNTER' });
  });
});

describe('what the API did', () => {
  it('counts every request by route template, method and status class, in the duration histogram', async () => {
    const before = await scrape();
    const id = world.contracts.find((c) => world.canSee(world.userIdOf('alice'), c))!.id;
    const sent = [
      ...Array.from({ length: 3 }, () => apiRequest('GET', '/contracts?limit=2', { key: world.keys.alice })),
      ...Array.from({ length: 2 }, () => apiRequest('GET', `/contracts/${id}`, { key: world.keys.alice })),
      apiRequest('HEAD', `/contracts/${id}`, { key: world.keys.alice }),
      apiRequest('GET', '/contracts/00000000-0000-4000-8000-000000000000', { key: world.keys.alice }),
      apiRequest('GET', '/contracts?limit=2', { key: null }),
      apiRequest('GET', '/nothing/here', { key: world.keys.alice }),
      apiRequest('DELETE', '/contracts', { key: world.keys.alice }),
      apiRequest('BREW', '/contracts', { key: world.keys.alice }),
    ];
    const statuses = [];
    for (const req of sent) statuses.push((await send(req)).status);
    expect(statuses).toEqual([200, 200, 200, 200, 200, 200, 404, 401, 404, 405, 405]);

    const after = await scrape();
    const count = (route: string, method: string, status_class: string) => {
      const labels = { route, method, status_class };
      return after.value('http_server_request_duration_seconds_count', labels) - before.value('http_server_request_duration_seconds_count', labels);
    };
    expect(count('/api/v1/contracts', 'GET', '2xx')).toBe(3);
    expect(count('/api/v1/contracts/{id}', 'GET', '2xx')).toBe(2);
    expect(count('/api/v1/contracts/{id}', 'HEAD', '2xx')).toBe(1);
    expect(count('/api/v1/contracts/{id}', 'GET', '4xx')).toBe(1);
    expect(count('/api/v1/contracts', 'GET', '4xx')).toBe(1);
    expect(count('unmatched', 'GET', '4xx')).toBe(1);
    expect(count('/api/v1/contracts', 'DELETE', '4xx')).toBe(1);
    // An unknown method is one label value, whatever a client invents.
    expect(count('/api/v1/contracts', '_OTHER', '4xx')).toBe(1);
    // Nothing else was counted: the raw path never becomes a label.
    const total = (s: Scrape) => s.value('http_server_request_duration_seconds_count');
    expect(total(after) - total(before)).toBe(sent.length);
    expect(after.samples.some((s) => s.labels.route?.includes(id))).toBe(false);
    // The histogram is whole: +Inf bucket = count, and time was spent.
    const labels = { route: '/api/v1/contracts', method: 'GET', status_class: '2xx' };
    expect(after.value('http_server_request_duration_seconds_bucket', { ...labels, le: '+Inf' })).toBe(after.value('http_server_request_duration_seconds_count', labels));
    expect(after.value('http_server_request_duration_seconds_sum', labels)).toBeGreaterThan(before.value('http_server_request_duration_seconds_sum', labels));
  });

  it('counts a 429 against its bucket, and the rows of the exports', async () => {
    await awayFromWindowEdge(3600, 10_000);
    const before = await scrape();
    const key = world.keys.bob;
    const answers = [];
    for (let i = 0; i < 3; i++) answers.push(await send(apiRequest('POST', '/contracts/export', { key, body: '{}', headers: { 'content-type': 'application/json' } })));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 429]);
    const rowsExported = answers.slice(0, 2).reduce((n, a) => n + a.text.trimEnd().split('\n').length - 1, 0);
    expect(rowsExported).toBeGreaterThan(0);

    const after = await scrape();
    const delta = (name: string, labels?: Record<string, string>) => after.value(name, labels) - before.value(name, labels);
    expect(delta('rate_limit_refusals_total', { bucket: 'export' })).toBe(1);
    expect(delta('rate_limit_refusals_total', { bucket: 'general' })).toBe(0);
    expect(delta('contracts_export_rows_total')).toBe(rowsExported);
    expect(delta('http_server_request_duration_seconds_count', { route: '/api/v1/contracts/export', status_class: '4xx' })).toBe(1);
  });

  it('counts every bad key, and the refusals of an address out of attempts', async () => {
    await awayFromWindowEdge(60, 5000);
    const before = await scrape();
    const address = freshAddress();
    const bad = Object.values(world.badKeys);
    for (const key of bad) expect((await send(apiRequest('GET', '/contracts', { key, clientAddress: address }))).status).toBe(bad.indexOf(key) < 5 ? 401 : 429);
    const after = await scrape();
    expect(after.value('auth_failed_key_attempts_total', { kind: 'api_key' }) - before.value('auth_failed_key_attempts_total', { kind: 'api_key' })).toBe(bad.length);
    expect(after.value('rate_limit_refusals_total', { bucket: 'auth_failure' }) - before.value('rate_limit_refusals_total', { bucket: 'auth_failure' })).toBe(bad.length - 5);
  });

  it('counts failed password sign-ins, and those the limit refuses', async () => {
    await awayFromWindowEdge(60, 5000);
    const before = await scrape();
    const address = freshAddress();
    const attempt = (password: string) => signInWithPasswordLimited(world.handle.db, { address, email: DEMO_USERS.carol.email, password });
    expect(await attempt('wrong password 1')).toEqual({ ok: false, reason: 'wrong_credentials' });
    expect(await attempt('wrong password 2')).toEqual({ ok: false, reason: 'wrong_credentials' });
    expect(await attempt(DEMO_PASSWORD)).toMatchObject({ ok: false, reason: 'rate_limited' });
    const after = await scrape();
    expect(after.value('auth_sign_in_failures_total') - before.value('auth_sign_in_failures_total')).toBe(2);
    expect(after.value('auth_sign_in_refusals_total', { bucket: 'sign_in_address' }) - before.value('auth_sign_in_refusals_total', { bucket: 'sign_in_address' })).toBe(1);
  });
});

describe('the webhook outbox', () => {
  let receiver: Receiver;
  beforeAll(async () => {
    receiver = await startReceiver();
  });
  afterAll(async () => {
    await receiver?.close();
    await clearWebhooks(world.handle.db);
  });

  const pendingRows = async () => {
    const [row] = await world.handle.query<{ events: number; deliveries: number }>(
      `SELECT (SELECT count(*) FROM webhook_events WHERE fanned_out_at IS NULL)::int AS events,
              (SELECT count(*) FROM webhook_deliveries WHERE state = 'pending')::int AS deliveries`,
    );
    return row!;
  };

  it('shows the queue depth as the rows pending, and counts deliveries by outcome', async () => {
    const alice = world.userIdOf('alice');
    // Every change is an event of the list: the seed's are fanned out (to no endpoint) first.
    await fanOutEvents(world.handle.db, new Date(), 500);
    await receiverEndpoint(world.handle.db, alice, receiver);
    const mine = world.contracts.filter((c) => c.ownerId === alice && c.organizationId === null).slice(0, 3);
    for (const c of mine) await world.handle.query(`UPDATE contracts SET title = title || ' (edited)', updated_at = now() WHERE id = $1`, [c.id]);

    const waiting = await pendingRows();
    expect(waiting.events).toBe(3);
    let s = await scrape();
    expect(s.value('webhook_queue_depth', { queue: 'events' })).toBe(waiting.events);
    expect(s.value('webhook_queue_depth', { queue: 'deliveries' })).toBe(waiting.deliveries);

    await fanOutEvents(world.handle.db, new Date(), 500);
    const fannedOut = await pendingRows();
    expect(fannedOut).toEqual({ events: 0, deliveries: waiting.deliveries + 3 });
    s = await scrape();
    expect(s.value('webhook_queue_depth', { queue: 'events' })).toBe(0);
    expect(s.value('webhook_queue_depth', { queue: 'deliveries' })).toBe(fannedOut.deliveries);

    // The first answer is a 500, the others 200: one failed attempt (retried later), two successes.
    receiver.replies.push({ status: 500 });
    const before = s;
    const pass = await testWorker(world.handle.db).runOnce();
    expect(pass).toMatchObject({ attempted: 3, succeeded: 2 });
    const after = await scrape();
    const delta = (outcome: string) => after.value('webhook_deliveries_total', { outcome }) - before.value('webhook_deliveries_total', { outcome });
    expect([delta('succeeded'), delta('failed'), delta('skipped'), delta('error')]).toEqual([2, 1, 0, 0]);
    expect(after.value('webhook_queue_depth', { queue: 'deliveries' })).toBe((await pendingRows()).deliveries);
    expect(after.value('webhook_queue_depth', { queue: 'deliveries' })).toBe(1);
  });
});

describe('the database', () => {
  /** A statement that sleeps on the database (one row of users, so one sleep). */
  const sleeper = (seconds: number, name = 'metrics test sleep'): Statement<unknown> => ({
    name,
    build: (db: Database) =>
      db
        .select({ slept: sql<string>`pg_sleep(${sql.placeholder('seconds')})::text` })
        .from(users)
        .limit(1),
    values: { seconds },
    prepareOnServer: false,
  });

  /**
   * `n` statements in flight at the database, started together, until `release()`: on
   * Postgres each sleeps a second (the pool runs 4 at once, the others wait for a
   * connection); PGlite runs one statement at a time, so there a transaction holds the
   * database while `n` quick statements queue behind it.
   */
  async function heldStatements(n: number) {
    const quick = world.handle.driver === 'pglite';
    const inFlight = () => processMetrics().inFlight.get(world.handle.db) ?? 0;
    // The earlier tests' requests leave key activity and security events to be written in
    // the background (a second later): written now, and settled, they cannot be counted
    // among the held statements (one was, under load, in CI).
    await flushKeyActivity();
    await flushSecurityEvents();
    await vi.waitFor(() => expect(inFlight()).toBe(0), { timeout: 5_000, interval: 20 });
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const holding = quick
      ? world.handle.db.transaction(async (tx) => {
          await tx.execute(sql`select 1`);
          await gate;
        })
      : gate;
    const running = Promise.all(Array.from({ length: n }, (_, i) => runStatement(world.handle.db, sleeper(quick ? 0 : 1, `metrics test held ${i}`))));
    return {
      // Every one of them counted (a fixed pause was too short on a loaded machine).
      started: vi.waitFor(() => expect(inFlight()).toBe(n), { timeout: 5_000, interval: 20 }),
      release: async () => {
        open();
        await holding;
        return running;
      },
    };
  }

  it('shows the statements in flight as connections in use, and those beyond the pool as waiting', async () => {
    const idle = await scrape();
    expect(idle.value('db_pool_connections_in_use', { pool: 'primary' })).toBe(0);
    expect(idle.value('db_pool_statements_waiting', { pool: 'primary' })).toBe(0);
    const max = world.handle.driver === 'pglite' ? 1 : 4;
    expect(idle.value('db_pool_connections_max', { pool: 'primary' })).toBe(max);
    // No replica configured: its series are absent, not a misleading 0.
    expect(idle.has('db_replica_in_use')).toBe(false);

    const held = await heldStatements(6);
    await held.started;
    const busy = await scrape();
    await held.release();
    expect(busy.value('db_pool_connections_in_use', { pool: 'primary' })).toBe(max);
    expect(busy.value('db_pool_statements_waiting', { pool: 'primary' })).toBe(6 - max);
    // Once the busy scrape's own count of the webhook queue, which queued behind them past its budget, is answered too.
    await vi.waitFor(
      async () => {
        const done = await scrape();
        expect(done.value('db_pool_connections_in_use', { pool: 'primary' })).toBe(0);
        expect(done.value('db_pool_statements_waiting', { pool: 'primary' })).toBe(0);
      },
      { timeout: 5_000, interval: 100 },
    );
  });

  it.skipIf(!process.env.DATABASE_URL)('counts real statements in flight on the pool (Postgres)', async () => {
    const running = Promise.all(Array.from({ length: 3 }, () => runStatement(world.handle.db, sleeper(0.5))));
    await new Promise((r) => setTimeout(r, 150));
    const busy = await scrape();
    await running;
    expect(busy.value('db_pool_connections_in_use', { pool: 'primary' })).toBe(3);
    expect(busy.value('db_pool_statements_waiting', { pool: 'primary' })).toBe(0);
  });

  it.skipIf(!process.env.DATABASE_URL)('counts statements cancelled by statement_timeout (Postgres)', async () => {
    const before = await scrape();
    const error = await world.handle.db
      .transaction(async (tx) => {
        await tx.execute(sql`SET LOCAL statement_timeout = 50`);
        await runStatement(tx as unknown as Database, sleeper(2, 'metrics test timeout'));
      })
      .catch((e: unknown) => e);
    expect(String((error as { cause?: { code?: string } }).cause?.code ?? (error as { code?: string }).code)).toBe('57014');
    await new Promise((r) => setTimeout(r, 10));
    const after = await scrape();
    expect(after.value('db_statement_timeouts_total') - before.value('db_statement_timeouts_total')).toBe(1);
  });
});

describe.skipIf(!process.env.DATABASE_URL)('the read replica (Postgres)', () => {
  it('is shown in use with its lag while its probe answers, left out with no lag once it stops answering', async () => {
    // A second pool on the test database stands for the replica: no standby, so no lag.
    const url = (world.handle as typeof world.handle & { url?: string }).url!;
    const replica = await openPostgres(url, { max: 2 });
    await applyConfig({ ...ENV, DATABASE_REPLICA_MAX_LAG_MS: '400' });
    try {
      setProcessDatabase(world.handle, replica);
      await expect.poll(async () => (await scrape()).value('db_replica_in_use', { pool: 'replica' }), { timeout: 5000 }).toBe(1);
      const inUse = await scrape();
      expect(inUse.has('db_replica_lag_seconds', { pool: 'replica' })).toBe(true);
      expect(inUse.value('db_replica_lag_seconds', { pool: 'replica' })).toBe(0);
      expect(inUse.value('db_pool_connections_max', { pool: 'replica' })).toBe(4);

      await replica.close();
      await expect.poll(async () => (await scrape()).value('db_replica_in_use', { pool: 'replica' }), { timeout: 5000 }).toBe(0);
      expect((await scrape()).has('db_replica_lag_seconds')).toBe(false);
    } finally {
      setProcessDatabase(world.handle);
      await applyConfig(ENV);
    }
  });
});

describe('secrets', () => {
  it('never appear in the text: not the metrics token, keys, feed tokens, webhook secrets or connection strings', async () => {
    const { text } = await scrape();
    const secrets = [
      TOKEN,
      ...Object.values(world.keys),
      ...Object.values(world.badKeys).filter((k) => k.length > 12),
      ...Object.values(world.feedTokens),
      world.revokedFeedToken,
      WEBHOOK_TEST_ENV.WEBHOOK_ENCRYPTION_KEY,
      ...(process.env.DATABASE_URL ? [process.env.DATABASE_URL] : []),
      DEMO_PASSWORD,
    ];
    for (const secret of secrets) expect(text).not.toContain(secret);
    // Nor a hash or a piece of a key: no label value looks like a token.
    for (const s of parseScrape(text).samples) for (const v of Object.values(s.labels)) expect(v).not.toMatch(/[A-Za-z0-9_-]{24,}/);
  });
});
