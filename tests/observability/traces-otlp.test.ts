import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { context, propagation, trace } from '@opentelemetry/api';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { DatabaseHandle } from '@/db/client';
import { setStatementHook } from '@/db/statement-hook';
import { DEMO_USERS, seedDemo } from '@/db/seed/demo';
import { setProcessDatabase } from '@/server/database';
import { normalizeAddress } from '@/server/http/client-address';
import { startTracing } from '@/server/observability/otel';
import { observed } from '@/server/observability/request';
import { currentTraceId, traceApiRequest, traceRoute } from '@/server/observability/tracing';
import { createCallerFactory, createInnerContext } from '@/server/trpc/init';
import { internalRouter } from '@/server/trpc/root';
import { handleCronRequest } from '@/server/webhooks/cron';
import { WebhookWorker } from '@/server/webhooks/worker';
import { handleApiRequest } from '@/server/rest/router';
import { sendWebhook } from '@/server/webhooks/sender';
import { apiRequest, CLIENT_ADDRESS, PROXY_CLIENT_ADDRESS } from '../helpers/api';
import { configureForFile } from '../helpers/config';
import { captureLogs } from '../helpers/logs';
import { createTestDatabase, describeDriver } from '../helpers/db';
import { startOtlpReceiver, type ExportedSpan, type OtlpReceiver } from '../helpers/otlp-receiver';
import { newApiKey } from '../helpers/tokens';

/**
 * The app's spans as a collector receives them, on both database drivers: the SDK that
 * instrumentation.ts registers (server/observability/otel.ts, @vercel/otel) exports
 * OTLP/JSON to a real OTLP/HTTP receiver this file starts, while requests go through the
 * API's router as the App Router hands them over. Outside Next.js the request's span is
 * the trace's root (or continues an incoming traceparent). e2e/traces.spec.ts checks the
 * same under `next start`, with Next.js's spans.
 */

// The span helpers read the switch once, when their module loads (before this file's
// body runs): an endpoint must be set by then. The receiver's own address is set before
// the SDK starts, which is when the exporter reads it.
const saved = vi.hoisted(() => {
  const previous = { ...process.env };
  process.env.OTEL_EXPORTER_OTLP_ENDPOINT = 'http://127.0.0.1:9';
  return previous;
});

const CRON_SECRET = 'a-cron-secret-for-the-trace-tests-0123';
configureForFile({ ...PROXY_CLIENT_ADDRESS, CRON_SECRET });

let receiver: OtlpReceiver;
let handle: DatabaseHandle;

beforeAll(async () => {
  receiver = await startOtlpReceiver();
  // With a trailing slash, as people write it (the SDK would post to "//v1/traces").
  process.env.OTEL_EXPORTER_OTLP_ENDPOINT = `${receiver.endpoint}/`;
  process.env.OTEL_EXPORTER_OTLP_PROTOCOL = 'http/json';
  process.env.OTEL_BSP_SCHEDULE_DELAY = '50';
  startTracing();
  handle = await createTestDatabase();
  setProcessDatabase(handle);
  await seedDemo(handle.db);
});

afterAll(async () => {
  trace.disable();
  context.disable();
  propagation.disable();
  setStatementHook(undefined);
  for (const name of ['OTEL_EXPORTER_OTLP_ENDPOINT', 'OTEL_EXPORTER_OTLP_PROTOCOL', 'OTEL_BSP_SCHEDULE_DELAY']) {
    if (saved[name] === undefined) delete process.env[name];
    else process.env[name] = saved[name];
  }
  await handle?.close();
  await receiver?.close();
});

/** The spans of the trace of `traceId` once `ready` holds for them. */
async function spansOf(traceId: string, ready: (spans: ExportedSpan[]) => boolean): Promise<ExportedSpan[]> {
  let spans: ExportedSpan[] = [];
  await vi.waitFor(
    () => {
      spans = receiver.spans().filter((s) => s.traceId === traceId);
      if (!ready(spans)) throw new Error(`trace ${traceId}: ${spans.length} spans so far`);
    },
    { timeout: 10_000, interval: 50 },
  );
  return spans;
}

function children(of: ExportedSpan, spans: ExportedSpan[]): ExportedSpan[] {
  const below = new Set([of.spanId]);
  let grew = true;
  while (grew) {
    grew = false;
    for (const s of spans) {
      if (s.parentSpanId && below.has(s.parentSpanId) && !below.has(s.spanId)) {
        below.add(s.spanId);
        grew = true;
      }
    }
  }
  return spans.filter((s) => s !== of && below.has(s.spanId));
}

const requestSpanOf = (spans: ExportedSpan[]) => spans.find((s) => s.attributes['http.route'] !== undefined);

describe(`traces exported over OTLP/HTTP (${describeDriver()})`, () => {
  it('a list request: the server span with its route, status and client address; the key check, the rate limit and each statement below it', async () => {
    const { key } = await newApiKey(handle.db, DEMO_USERS.alice.id, { name: 'traces' });
    // An incoming trace context is continued: the request's span is its child.
    const parentTraceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const parentSpanId = '00f067aa0ba902b7';
    const search = 'needle-7c41e2';
    const res = await handleApiRequest(
      apiRequest('GET', `/contracts?q=${search}&limit=3`, { key, headers: { traceparent: `00-${parentTraceId}-${parentSpanId}-01` } }),
    );
    expect(res.status).toBe(200);
    await res.arrayBuffer();

    const spans = await spansOf(parentTraceId, (s) => s.some((span) => span.attributes['http.route']) && s.some((span) => span.name === 'rate_limit consume'));
    const request = requestSpanOf(spans)!;
    expect(request.parentSpanId).toBe(parentSpanId);
    expect(request.kind).toBe(2); // server: no Next.js span above it here
    expect(request.name).toBe('GET /api/v1/contracts');
    expect(request.attributes).toMatchObject({
      'http.request.method': 'GET',
      'http.route': '/api/v1/contracts',
      'http.response.status_code': 200,
      // X-Real-IP through the configured proxy header, by its /64 (the rate limiter's bucket).
      'client.address': normalizeAddress(CLIENT_ADDRESS),
      'url.path': '/api/v1/contracts',
    });
    const below = children(request, spans);
    expect(below.find((s) => s.name === 'verify token')?.attributes).toMatchObject({ 'app.token.kind': 'api_key', 'app.token.valid': true, 'app.token.cached': false });
    expect(below.find((s) => s.name === 'rate_limit consume')?.attributes).toMatchObject({ 'app.rate_limit.bucket': 'general', 'app.rate_limit.allowed': true });
    const statements = below.filter((s) => s.attributes['db.system.name'] === 'postgresql');
    expect(statements.map((s) => s.attributes['db.statement.name'])).toEqual(expect.arrayContaining(['access-tokens.by-hash', 'access-tokens.scope']));
    for (const s of statements.filter((span) => span.attributes['db.statement.name'] !== undefined)) {
      expect(s.attributes['db.operation.name']).toBe('SELECT');
      expect(s.name).toBe(`SELECT ${s.attributes['db.statement.name']}`);
    }
    // A page and its count ran, named after their shapes.
    expect(statements.some((s) => String(s.attributes['db.statement.name']).startsWith('contracts.page'))).toBe(true);
    expect(receiver.raw()).not.toContain(search);
    expect(receiver.raw()).not.toContain(key);
  });

  it("a Settings action (an API key created through tRPC, in a transaction): each statement Drizzle's builders send is a span below the request's, the transaction's too", async () => {
    const caller = createCallerFactory(internalRouter)(createInnerContext({ db: handle.db, sessionUser: { ...DEMO_USERS.alice, name: null } }));
    const name = 'traced-key-name-5d1e';
    let traceId: string | undefined;
    const res = await traceRoute(new Request('http://localhost/api/trpc/apiKeys.create', { method: 'POST' }), '/api/trpc/{procedure}', async () => {
      traceId = currentTraceId();
      const created = await caller.apiKeys.create({ name });
      return new Response(JSON.stringify({ created: Boolean(created) }), { status: 200 });
    });
    expect(res.status).toBe(200);
    await res.text();
    const spans = await spansOf(traceId!, (s) => s.some((span) => span.attributes['http.route'] === '/api/trpc/{procedure}'));
    const request = requestSpanOf(spans)!;
    const below = children(request, spans);
    const statements = below.filter((s) => s.attributes['db.system.name'] === 'postgresql');
    // The transaction's lock on the user, then the insert of the key (withUserLocked, db/queries/tokens.ts).
    expect(statements.find((s) => s.name === 'SELECT users')?.parentSpanId).toBe(request.spanId);
    const insert = statements.find((s) => s.name === 'INSERT access_tokens');
    expect(insert?.parentSpanId).toBe(request.spanId);
    expect(insert?.attributes).toMatchObject({ 'db.operation.name': 'INSERT', 'db.collection.name': 'access_tokens', 'db.query.summary': 'INSERT access_tokens' });
    expect(insert?.kind).toBe(3); // client
    // Names and shapes only: never a value the statement carried.
    expect(receiver.raw()).not.toContain(name);
  });

  it("a run of the webhook worker (Vercel Cron's call): its statements are spans of the cron request's trace", async () => {
    const res = await handleCronRequest(new Request('http://localhost/api/cron/webhooks', { headers: { authorization: `Bearer ${CRON_SECRET}` } }));
    expect(res.status).toBe(200);
    await res.text();
    const cronSpan = () => receiver.spans().find((s) => s.attributes['http.route'] === '/api/cron/webhooks');
    await vi.waitFor(() => expect(cronSpan()).toBeDefined(), { timeout: 10_000 });
    const spans = await spansOf(cronSpan()!.traceId, (s) => s.some((span) => span.attributes['db.system.name'] === 'postgresql'));
    const statements = children(cronSpan()!, spans).filter((s) => s.attributes['db.system.name'] === 'postgresql');
    // The fan-out of events into deliveries and the claim of due deliveries (db/queries/webhooks.ts) ran.
    expect(statements.length).toBeGreaterThanOrEqual(2);
    expect(statements.map((s) => s.attributes['db.operation.name'])).toEqual(expect.arrayContaining(['UPDATE']));
    expect(receiver.raw()).not.toContain(CRON_SECRET);
  });

  it("the running worker: a pass woken by a new event (NOTIFY) is a root span with the pass's statements below it; its polls are not traced", async () => {
    const worker = new WebhookWorker({ handle, pollIntervalMs: 60_000 });
    worker.start();
    try {
      const passes = () => receiver.spans().filter((s) => s.name === 'webhook pass');
      // The first pass (at start, not woken by an event) makes no trace.
      await vi.waitFor(() => expect(worker.busy).toBe(false), { timeout: 10_000 });
      expect(passes()).toHaveLength(0);
      // The notification a new event sends (the contracts' trigger, db/migrations/0004_webhooks.sql,
      // sends it when an endpoint exists); again until the worker hears one (it LISTENs in the background).
      await vi.waitFor(
        async () => {
          if (passes().length === 0) await handle.query(`SELECT pg_notify('webhook_events', '')`);
          expect(passes().length).toBeGreaterThan(0);
        },
        { timeout: 15_000, interval: 1_000 },
      );
      const pass = passes()[0]!;
      expect(pass.parentSpanId).toBeUndefined();
      const spans = await spansOf(pass.traceId, (s) => s.some((span) => span.attributes['db.system.name'] === 'postgresql'));
      const statements = children(pass, spans).filter((s) => s.attributes['db.system.name'] === 'postgresql');
      // The fan-out looked for new events, the claim for due deliveries: each statement a span of the pass.
      expect(statements.length).toBeGreaterThanOrEqual(2);
      for (const statement of statements) expect(statement.attributes['db.operation.name']).toMatch(/^(SELECT|INSERT|UPDATE|DELETE)$/);
    } finally {
      await worker.stop();
    }
  });

  it("an export: a span per page with its row count, inside the request's span, which ends when the file is read", async () => {
    const { key } = await newApiKey(handle.db, DEMO_USERS.alice.id, { name: 'traces export' });
    const res = await handleApiRequest(apiRequest('POST', '/contracts/export', { key, body: '{}', headers: { 'content-type': 'application/json' } }));
    expect(res.status).toBe(200);
    const rows = (await res.text()).split('\r\n').filter(Boolean).length - 1;
    const exportSpan = () => receiver.spans().find((s) => s.attributes['http.route'] === '/api/v1/contracts/export');
    await vi.waitFor(() => expect(exportSpan()).toBeDefined(), { timeout: 10_000 });
    const spans = await spansOf(exportSpan()!.traceId, (s) => s.filter((span) => span.name === 'export page').length >= 2);
    const request = exportSpan()!;
    const pages = children(request, spans).filter((s) => s.name === 'export page');
    expect(pages.reduce((sum, p) => sum + Number(p.attributes['app.page.rows']), 0)).toBe(rows);
    expect(pages.at(-1)?.attributes['app.page.rows']).toBe(0);
  });

  it('the trace id is the active one inside the request (what the log line reads)', async () => {
    let inside: { ours?: string; api?: string } = {};
    const res = await traceApiRequest(apiRequest('GET', '/openapi.json'), async () => {
      inside = { ours: currentTraceId(), api: trace.getActiveSpan()?.spanContext().traceId };
      return new Response('{}', { status: 200 });
    });
    await res.text();
    expect(inside.ours).toMatch(/^[0-9a-f]{32}$/);
    expect(inside.api).toBe(inside.ours);
    await spansOf(inside.ours!, (s) => s.length === 1);
    expect(currentTraceId()).toBeUndefined();
  });

  it("the request's log line carries the trace id of its exported request span (the route's observer opens the record before the span)", async () => {
    const { key } = await newApiKey(handle.db, DEMO_USERS.alice.id, { name: 'traces log' });
    const logs = captureLogs('info');
    try {
      const res = await observed('/api/v1/[[...path]]', handleApiRequest)(apiRequest('GET', '/contracts?limit=1', { key }));
      expect(res.status).toBe(200);
      await res.arrayBuffer();
      const line = logs.entries.find((entry) => entry.request_id === res.headers.get('x-request-id') && entry.route === '/api/v1/contracts');
      expect(line?.trace_id).toMatch(/^[0-9a-f]{32}$/);
      const spans = await spansOf(String(line!.trace_id), (s) => s.some((span) => span.attributes['http.route'] === '/api/v1/contracts'));
      expect(requestSpanOf(spans)?.attributes['http.response.status_code']).toBe(200);
    } finally {
      logs.restore();
    }
  });

  it("a webhook delivery is a root span whose traceparent the receiver gets, without the URL's path", async () => {
    let received: IncomingHttpHeaders | undefined;
    const server = createServer((req, res) => {
      received = req.headers;
      req.resume().on('end', () => res.writeHead(204).end());
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const url = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/secret-path-3f9a`);
      const result = await sendWebhook(url, { 'webhook-id': 'msg_1' }, '{}', { policy: { allowPrivate: true, allowHttp: true } });
      expect(result.ok).toBe(true);
      const [, traceId, spanId] = /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/.exec(String(received?.traceparent)) ?? [];
      expect(traceId).toBeDefined();
      const [delivery] = await spansOf(traceId!, (s) => s.some((span) => span.spanId === spanId));
      expect(delivery).toMatchObject({ name: 'POST webhook', kind: 3, parentSpanId: undefined });
      expect(delivery!.attributes).toMatchObject({ 'server.address': '127.0.0.1', 'http.response.status_code': 204 });
      expect(receiver.raw()).not.toContain('secret-path-3f9a');
    } finally {
      server.close();
    }
  });
});
