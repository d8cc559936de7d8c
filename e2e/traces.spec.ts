import { createHash, randomBytes } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect, request as playwrightRequest, test, type APIRequestContext } from '@playwright/test';
import { DEMO_USERS } from '@/db/seed/demo';
import { startOtlpReceiver, type ExportedSpan, type OtlpReceiver } from '../tests/helpers/otlp-receiver';
import { startOwnServer, type OwnServer } from './support/own-server';
import { createFeedToken, mintKey, signInOverHttp } from './support/session';

/**
 * Traces (issue 22), on the production build under `next start`, where instrumentation.ts
 * runs: the server exports OTLP/HTTP (JSON) to a real receiver this file starts, and a
 * second server without OTEL_EXPORTER_OTLP_ENDPOINT shows that nothing is traced then.
 * Each server has its own PGlite database (e2e/support/own-server.ts).
 *
 * Checked: the API request's span (method, route template, status, client address, and
 * Next.js's request span renamed after the template), its children for the key check,
 * the rate limit and every SQL statement (with its name, never its values), the export's
 * page spans with their row counts, a webhook delivery whose `traceparent` names an
 * exported span, and that no secret or query value reaches the exporter.
 */

const PORT_TRACED = 3810;
const PORT_UNTRACED = 3811;
const SERVER_ENV = {
  WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
  // `next start` fills X-Forwarded-For with the socket's address: one trusted hop.
  TRUSTED_PROXY_HOPS: '1',
};
const SPAN_KIND = { internal: 1, server: 2, client: 3 };

let receiver: OtlpReceiver;
let traced: OwnServer | undefined;

test.describe.configure({ mode: 'serial' });

test.beforeAll(async () => {
  test.setTimeout(180_000);
  receiver = await startOtlpReceiver();
  traced = await startOwnServer(PORT_TRACED, {
    ...SERVER_ENV,
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    OTEL_SERVICE_NAME: 'contract-data-api-e2e',
    // Export every 100 ms instead of every 5 s.
    OTEL_BSP_SCHEDULE_DELAY: '100',
  });
});

test.afterAll(async () => {
  traced?.stop();
  await receiver?.close();
});

interface WebhookReceiver {
  url: string;
  received: IncomingHttpHeaders[];
  close(): Promise<void>;
}

async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const received: IncomingHttpHeaders[] = [];
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      received.push(req.headers);
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/traces`,
    received,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

async function trpc<T>(api: APIRequestContext, procedure: string, input: unknown): Promise<T> {
  const res = await api.post(`/api/trpc/${procedure}`, { data: input });
  const text = await res.text();
  expect(res.status(), `${procedure}: ${text}`).toBe(200);
  return (JSON.parse(text) as { result: { data: T } }).result.data;
}

/** Fails, with the span around it, when `secret` is anywhere in what the exporter sent. */
function expectNotExported(secret: string, what: string): void {
  const exported = receiver.raw();
  const at = exported.indexOf(secret);
  expect(at === -1 ? '' : exported.slice(Math.max(0, at - 600), at + secret.length + 100), `${what} was exported`).toBe('');
}

/** The spans of one trace once `ready` holds for them (the exporter sends in batches). */
async function traceOf(traceId: () => string | undefined, ready: (spans: ExportedSpan[]) => boolean, what: string): Promise<ExportedSpan[]> {
  let spans: ExportedSpan[] = [];
  await expect
    .poll(
      () => {
        const id = traceId();
        spans = id ? receiver.spans().filter((s) => s.traceId === id) : [];
        return spans.length > 0 && ready(spans);
      },
      { message: what, timeout: 20_000 },
    )
    .toBe(true);
  return spans;
}

/** The app's request span of the request whose url.path is `path` and method `method`, the newest first. */
function requestSpan(method: string, path: string): ExportedSpan | undefined {
  return receiver
    .spans()
    .filter((s) => s.scope === 'contract-data-api' && s.attributes['url.path'] === path && s.attributes['http.request.method'] === method)
    .sort((a, b) => Number(b.startNs - a.startNs))[0];
}

/** Whether `span` descends from `ancestor` within `spans`. */
function descendsFrom(span: ExportedSpan, ancestor: ExportedSpan, spans: ExportedSpan[]): boolean {
  const byId = new Map(spans.map((s) => [s.spanId, s]));
  for (let parent = span.parentSpanId; parent; parent = byId.get(parent)?.parentSpanId) if (parent === ancestor.spanId) return true;
  return false;
}

test('an API request is a span with its route template, with children for the key check, the rate limit and each SQL statement', async () => {
  const api = await playwrightRequest.newContext({ baseURL: traced!.base });
  try {
    await signInOverHttp(api, DEMO_USERS.alice.email);
    const { key } = await mintKey(api, 'traces e2e');
    // A search value that must never be exported (it is a statement parameter and a query string).
    const search = `needle${randomBytes(6).toString('hex')}`;
    const list = await api.get(`/api/v1/contracts?q=${search}&limit=5`, { headers: { 'X-API-Key': key } });
    expect(list.status()).toBe(200);

    const spans = await traceOf(
      () => requestSpan('GET', '/api/v1/contracts')?.traceId,
      (s) => s.some((span) => span.attributes['next.span_type'] === 'BaseServer.handleRequest'),
      'the list request trace is exported with Next.js request span',
    );
    const request = spans.find((s) => s.scope === 'contract-data-api' && s.attributes['http.route'])!;
    expect(request.name).toBe('GET /api/v1/contracts');
    expect(request.attributes).toMatchObject({
      'http.request.method': 'GET',
      'http.route': '/api/v1/contracts',
      'http.response.status_code': 200,
      'client.address': '127.0.0.1',
      'url.path': '/api/v1/contracts',
    });

    // Next.js's own request span, the trace's root here, carries the template too, and no query string.
    const root = spans.find((s) => s.attributes['next.span_type'] === 'BaseServer.handleRequest')!;
    expect(root.kind).toBe(SPAN_KIND.server);
    expect(root.parentSpanId).toBeUndefined();
    expect(root.name).toBe('GET /api/v1/contracts');
    expect(root.attributes['http.route']).toBe('/api/v1/contracts');
    expect(root.attributes['http.target']).toBe('/api/v1/contracts');
    expect(descendsFrom(request, root, spans)).toBe(true);
    expect(root.serviceName).toBe('contract-data-api-e2e');

    const children = spans.filter((s) => descendsFrom(s, request, spans));
    const verify = children.find((s) => s.name === 'verify token');
    expect(verify?.attributes).toMatchObject({ 'app.token.kind': 'api_key', 'app.token.valid': true });
    const rateLimit = children.find((s) => s.name === 'rate_limit consume');
    expect(rateLimit?.attributes).toMatchObject({ 'app.rate_limit.bucket': 'general', 'app.rate_limit.allowed': true });
    expect(children.some((s) => s.name === 'rate_limit check' && s.attributes['app.rate_limit.bucket'] === 'auth_failure')).toBe(true);

    const statements = children.filter((s) => s.attributes['db.system.name'] === 'postgresql');
    // The key's lookup, the caller's memberships, the page and its count at least.
    expect(statements.length).toBeGreaterThanOrEqual(3);
    for (const statement of statements) {
      expect(statement.kind).toBe(SPAN_KIND.client);
      expect(statement.attributes['db.operation.name'], `operation of ${statement.name}`).toMatch(/^(SELECT|INSERT|UPDATE|DELETE)$/);
      expect(Object.keys(statement.attributes).filter((k) => /statement$|query\.text|parameter/.test(k) && k !== 'db.statement.name')).toEqual([]);
    }
    const names = statements.map((s) => s.attributes['db.statement.name']);
    expect(names).toContain('access-tokens.by-hash');
    const byHash = statements.find((s) => s.attributes['db.statement.name'] === 'access-tokens.by-hash')!;
    expect(byHash.name).toBe('SELECT access-tokens.by-hash');
    expect(byHash.attributes['db.query.summary']).toBe('SELECT access-tokens.by-hash');
    // The key check's lookup runs inside the key check's span.
    expect(descendsFrom(byHash, verify!, spans)).toBe(true);

    // Nothing the client sent that is secret or a value reaches the exporter.
    expectNotExported(search, 'the search value');
    expectNotExported(key, 'the API key');
    expectNotExported(createHash('sha256').update(key).digest('hex'), "the API key's hash");
    const { cookies } = await api.storageState();
    for (const cookie of cookies) if (cookie.value.length >= 16) expectNotExported(cookie.value, `the cookie ${cookie.name}`);

    // A get-one: the template as the route, the id only in url.path.
    const id = ((await list.json()) as { data: { contracts: { id: string }[] } }).data.contracts[0]?.id;
    const first = id ?? ((await (await api.get('/api/v1/contracts?limit=1', { headers: { 'X-API-Key': key } })).json()) as { data: { contracts: { id: string }[] } }).data.contracts[0]!.id;
    expect((await api.get(`/api/v1/contracts/${first}`, { headers: { 'X-API-Key': key } })).status()).toBe(200);
    const getOne = await traceOf(
      () => requestSpan('GET', `/api/v1/contracts/${first}`)?.traceId,
      (s) => s.some((span) => span.attributes['next.span_type'] === 'BaseServer.handleRequest'),
      'the get-one trace is exported',
    );
    const getOneSpan = getOne.find((s) => s.scope === 'contract-data-api' && s.attributes['http.route'])!;
    expect(getOneSpan.name).toBe('GET /api/v1/contracts/{id}');
    expect(getOneSpan.attributes['http.route']).toBe('/api/v1/contracts/{id}');
    expect(getOne.find((s) => s.attributes['next.span_type'] === 'BaseServer.handleRequest')!.attributes['http.route']).toBe('/api/v1/contracts/{id}');

    // A bad key: a 401 with the key check's refusal, and the key never exported.
    const wrongKey = `${key.slice(0, -6)}aaaaaa`;
    expect((await api.get('/api/v1/contracts?limit=1', { headers: { 'X-API-Key': wrongKey } })).status()).toBe(401);
    await expect
      .poll(() => receiver.spans().some((s) => s.scope === 'contract-data-api' && s.attributes['http.response.status_code'] === 401), { timeout: 20_000 })
      .toBe(true);
    expectNotExported(wrongKey, 'a refused key');
  } finally {
    await api.dispose();
  }
});

test("the export's pages are spans with their row counts, inside the request's span, which lasts until the file is sent", async () => {
  const api = await playwrightRequest.newContext({ baseURL: traced!.base });
  try {
    await signInOverHttp(api, DEMO_USERS.alice.email);
    const { key } = await mintKey(api, 'traces e2e export');
    const res = await api.post('/api/v1/contracts/export', { headers: { 'X-API-Key': key }, data: {} });
    expect(res.status()).toBe(200);
    const rows = (await res.text()).split('\r\n').filter((line) => line !== '').length - 1;
    expect(rows).toBeGreaterThan(0);

    const spans = await traceOf(
      () => requestSpan('POST', '/api/v1/contracts/export')?.traceId,
      (s) => s.some((span) => span.name === 'export page' && span.attributes['app.page.rows'] === 0) && s.some((span) => span.attributes['http.route']),
      'the export trace with its last (empty) page',
    );
    const request = spans.find((s) => s.scope === 'contract-data-api' && s.attributes['http.route'])!;
    expect(request.attributes).toMatchObject({ 'http.route': '/api/v1/contracts/export', 'http.response.status_code': 200 });
    const pages = spans.filter((s) => s.name === 'export page');
    for (const page of pages) expect(descendsFrom(page, request, spans)).toBe(true);
    expect(pages.reduce((sum, page) => sum + Number(page.attributes['app.page.rows']), 0)).toBe(rows);
    // Each page's statements are children of its span.
    const firstPage = pages.find((p) => Number(p.attributes['app.page.rows']) > 0)!;
    expect(spans.some((s) => s.attributes['db.system.name'] === 'postgresql' && s.parentSpanId === firstPage.spanId)).toBe(true);
    // The request's span ends after the last page was read: it times the whole download.
    // (The SDK stamps a span's start to the millisecond and adds its exact duration, so
    // ends of two spans compare within 1 ms; the pages themselves take longer.)
    const lastPageEnd = pages.reduce((max, p) => (p.endNs > max ? p.endNs : max), 0n);
    const firstPageEnd = pages.reduce((min, p) => (p.endNs < min ? p.endNs : min), lastPageEnd);
    expect(pages.length).toBeGreaterThanOrEqual(2);
    expect(request.endNs + 1_000_000n >= lastPageEnd, 'the request span lasts until the last page').toBe(true);
    expect(request.endNs > firstPageEnd, 'the request span outlasts the first page, read before the response').toBe(true);
  } finally {
    await api.dispose();
  }
});

test("a calendar feed's token is never exported: the route and url.path are its template", async () => {
  const api = await playwrightRequest.newContext({ baseURL: traced!.base });
  try {
    await signInOverHttp(api, DEMO_USERS.alice.email);
    const token = await createFeedToken(api, 'traces e2e feed');
    const feed = await api.get(`/api/v1/calendar/${token}.ics`);
    expect(feed.status()).toBe(200);
    const spans = await traceOf(
      () => requestSpan('GET', '/api/v1/calendar/{token}.ics')?.traceId,
      (s) => s.some((span) => span.attributes['next.span_type'] === 'BaseServer.handleRequest'),
      'the feed trace is exported',
    );
    const request = spans.find((s) => s.scope === 'contract-data-api' && s.attributes['http.route'])!;
    expect(request.attributes).toMatchObject({ 'http.route': '/api/v1/calendar/{token}.ics', 'url.path': '/api/v1/calendar/{token}.ics' });
    expect(spans.find((s) => s.attributes['next.span_type'] === 'BaseServer.handleRequest')!.attributes['http.target']).toBe('/api/v1/calendar/{token}.ics');
    expect(spans.find((s) => s.name === 'verify token')?.attributes['app.token.kind']).toBe('calendar_feed');
    expectNotExported(token, 'the feed token');
    expectNotExported(createHash('sha256').update(token).digest('hex'), "the feed token's hash");
  } finally {
    await api.dispose();
  }
});

test('a webhook delivery carries the traceparent of its exported span', async () => {
  const hooks = await startWebhookReceiver();
  const api = await playwrightRequest.newContext({ baseURL: traced!.base });
  try {
    await signInOverHttp(api, DEMO_USERS.alice.email);
    const created = await trpc<{ secret: string; endpoint: { id: string } }>(api, 'webhooks.create', { url: hooks.url });
    const sent = await trpc<{ state: string }>(api, 'webhooks.sendTest', { id: created.endpoint.id });
    expect(sent.state).toBe('succeeded');
    const traceparent = String(hooks.received.at(-1)?.traceparent ?? '');
    const match = /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/.exec(traceparent);
    expect(match, `traceparent ${traceparent}`).not.toBeNull();
    const [, traceId, spanId] = match!;
    const spans = await traceOf(() => traceId, (s) => s.some((span) => span.spanId === spanId), 'the delivery span is exported');
    const delivery = spans.find((s) => s.spanId === spanId)!;
    expect(delivery.name).toBe('POST webhook');
    expect(delivery.kind).toBe(SPAN_KIND.client);
    expect(delivery.parentSpanId).toBeUndefined();
    expect(delivery.attributes).toMatchObject({ 'http.request.method': 'POST', 'server.address': '127.0.0.1', 'http.response.status_code': 200 });
    // Sent from Settings: linked to the tRPC request that asked for it, itself a span with its route.
    const trpcRequest = receiver.spans().find((s) => s.spanId === delivery.links[0]?.spanId);
    expect(trpcRequest?.attributes['http.route']).toBe('/api/trpc/{procedure}');
    // The endpoint's URL path and its signing secret are not exported.
    expectNotExported('/hooks/traces', "the webhook URL's path");
    expectNotExported(created.secret, 'the signing secret');
    expectNotExported(created.secret.replace(/^whsec_/, ''), "the signing secret's key");
  } finally {
    await api.dispose();
    await hooks.close();
  }
});

test("the request's log line carries its trace id", () => {
  // The JSON request log is another part of issue 22 ("Logs"); it reads the active span's
  // trace id (currentTraceId() in server/observability/tracing.ts) inside this span.
  test.skip(!/"trace_?[iI]d"/.test(traced!.log()), 'the JSON request log line is not in this build yet');
  const exportedTraceIds = new Set(receiver.spans().map((s) => s.traceId));
  const logged = [...traced!.log().matchAll(/"trace_?[iI]d"\s*:\s*"([0-9a-f]{32})"/g)].map((m) => m[1]!);
  expect(logged.length).toBeGreaterThan(0);
  for (const id of logged) expect(exportedTraceIds.has(id), `logged trace id ${id} was exported`).toBe(true);
});

// That the span helpers do not even call the OpenTelemetry API then is
// tests/observability/tracing-off.test.ts; here, what a receiver of the server's requests sees.
test('without OTEL_EXPORTER_OTLP_ENDPOINT nothing is traced: no traceparent on webhooks', async () => {
  test.setTimeout(180_000);
  const hooks = await startWebhookReceiver();
  // Every OTLP variable but the endpoint: they alone must not turn anything on.
  const untraced = await startOwnServer(PORT_UNTRACED, {
    ...SERVER_ENV,
    OTEL_EXPORTER_OTLP_ENDPOINT: '',
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    OTEL_SERVICE_NAME: 'contract-data-api-e2e-untraced',
    OTEL_BSP_SCHEDULE_DELAY: '100',
  });
  const api = await playwrightRequest.newContext({ baseURL: untraced.base });
  try {
    await signInOverHttp(api, DEMO_USERS.alice.email);
    const { key } = await mintKey(api, 'traces e2e off');
    expect((await api.get('/api/v1/contracts?limit=5', { headers: { 'X-API-Key': key } })).status()).toBe(200);
    const created = await trpc<{ endpoint: { id: string } }>(api, 'webhooks.create', { url: hooks.url });
    expect((await trpc<{ state: string }>(api, 'webhooks.sendTest', { id: created.endpoint.id })).state).toBe('succeeded');
    expect(hooks.received).toHaveLength(1);
    expect(hooks.received[0]!.traceparent).toBeUndefined();
  } finally {
    await api.dispose();
    untraced.stop();
    await hooks.close();
  }
});
