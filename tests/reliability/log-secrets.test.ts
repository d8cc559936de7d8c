import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_ORGS, DEMO_PASSWORD, DEMO_USERS, seedDemo } from '@/db/seed/demo';
import { createPrivatePostgres, viaPort, type PrivatePostgres } from './support/postgres';
import { existingProductionBuild, freshProductionBuild } from './support/production-build';
import { startTcpProxy, type TcpProxy } from './support/tcp-proxy';

/**
 * The app as it runs in production (`next start` on a production build, a process of its
 * own), its stdout and stderr captured whole. Every kind of secret goes through every
 * path that logs, the error paths included (a wrong key's 401, the 429s of bad keys, of a
 * key's quota, of sign-in and of a feed, 404s, and with real Postgres an outage and the
 * request deadline's 503), then the whole output is searched for each secret, its
 * SHA-256 (hex and base64) and its base64 and URL-encoded forms. The request lines are
 * checked too: one per request, under the X-Request-Id of the answer, with the route
 * template, the key's id, the status, the error code, the byte count and the duration.
 */

const PORT = 3711;
const BASE = `http://127.0.0.1:${PORT}`;
const ROOT = path.resolve(import.meta.dirname, '..', '..');
const CLIENT = '203.0.113.10';
const GUESSER = '203.0.113.66';
const PASSWORD_GUESSER = '203.0.113.77';
const USER_AGENT = 'log-secrets-test/1.0';
const DEADLINE_MS = 1_500;
const postgres = Boolean(process.env.DATABASE_URL);
/**
 * The production server needs a production build: CI has one (.ci/run builds before the
 * tests) and builds it here if not; a developer's `npm test` runs this file after `npm
 * run build` and says it skipped it before, rather than spend two minutes of both cores
 * on a build of its own in every first run.
 */
const built = Boolean(process.env.CI) || existingProductionBuild() !== undefined;
if (!built) console.warn('SKIPPED: tests/reliability/log-secrets.test.ts needs a production build: run `npm run build` first (CI does).');

/** The configuration's own secrets: never logged either. */
const AUTH_SECRET = randomBytes(32).toString('base64url');
const CRON_SECRET = randomBytes(24).toString('base64url');
const WEBHOOK_ENCRYPTION_KEY = randomBytes(32).toString('base64url');

let server: ChildProcess | undefined;
let output = '';
let pgliteDir: string | undefined;
let db: PrivatePostgres | undefined;
let proxy: TcpProxy | undefined;
let receiver: Server | undefined;

/** Everything that must never be in the output. */
const secrets = new Map<string, string>([
  ['AUTH_SECRET', AUTH_SECRET],
  ['CRON_SECRET', CRON_SECRET],
  ['WEBHOOK_ENCRYPTION_KEY', WEBHOOK_ENCRYPTION_KEY],
  ['the demo password', DEMO_PASSWORD],
]);
/** Each request sent and its answer's request id, for the request lines. */
const sent: { requestId: string; method: string; status: number; bytes: number }[] = [];

interface Answer {
  status: number;
  headers: Headers;
  text: string;
  bytes: number;
  requestId: string;
}

let cookies = '';

async function call(method: string, url: string, init: { headers?: Record<string, string>; body?: string; from?: string; session?: boolean } = {}): Promise<Answer> {
  const res = await fetch(`${BASE}${url}`, {
    method,
    redirect: 'manual',
    headers: {
      'User-Agent': USER_AGENT,
      'X-Forwarded-For': init.from ?? CLIENT,
      ...(init.session && cookies ? { Cookie: cookies } : {}),
      ...init.headers,
    },
    body: init.body,
  });
  // Bytes as received (fetch decodes any compression): a BOM is kept, unlike res.text().
  const body = Buffer.from(await res.arrayBuffer());
  const requestId = res.headers.get('x-request-id') ?? '';
  sent.push({ requestId, method, status: res.status, bytes: body.length });
  // The server gathers its lines and writes them within 100 ms (server/observability/logger.ts).
  if (requestId) await waitFor(() => hasRequestLine(requestId), 2_000);
  return { status: res.status, headers: res.headers, text: body.toString('utf8'), bytes: body.length, requestId };
}

function keepCookies(res: Answer): void {
  const jar = new Map(cookies ? cookies.split('; ').map((c) => [c.slice(0, c.indexOf('=')), c] as const) : []);
  for (const line of res.headers.getSetCookie()) {
    const pair = line.split(';')[0]!;
    jar.set(pair.slice(0, pair.indexOf('=')), pair);
  }
  cookies = [...jar.values()].join('; ');
}

async function signIn(email: string, password: string, from = CLIENT): Promise<Answer> {
  const csrf = await call('GET', '/api/auth/csrf', { from });
  keepCookies(csrf);
  const { csrfToken } = JSON.parse(csrf.text) as { csrfToken: string };
  const body = new URLSearchParams({ csrfToken, email, password, callbackUrl: `${BASE}/settings` }).toString();
  const res = await call('POST', '/api/auth/callback/credentials', {
    from,
    session: true,
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body,
  });
  return res;
}

async function trpc<T>(procedure: string, input: unknown): Promise<T> {
  const res = await call('POST', `/api/trpc/${procedure}`, { session: true, headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(input) });
  expect(res.status, `${procedure}: ${res.text}`).toBe(200);
  return (JSON.parse(res.text) as { result: { data: T } }).result.data;
}

const hasRequestLine = (requestId: string) => output.includes(`"request_id":"${requestId}"`) && jsonLines().some((l) => l.msg === 'request' && l.request_id === requestId);

/** A page as a browser asks for it (not counted in `sent`: a page's line has no byte count when its body is streamed). */
async function page(method: string, url: string, init: { headers?: Record<string, string>; body?: string; session?: boolean } = {}) {
  const res = await fetch(`${BASE}${url}`, {
    method,
    redirect: 'manual',
    headers: { 'User-Agent': USER_AGENT, 'X-Forwarded-For': CLIENT, Accept: 'text/html', ...(init.session && cookies ? { Cookie: cookies } : {}), ...init.headers },
    body: init.body,
  });
  await res.arrayBuffer();
  const requestId = res.headers.get('x-request-id') ?? '';
  if (requestId) await waitFor(() => hasRequestLine(requestId), 2_000);
  return { status: res.status, requestId };
}

/** The request line written under `requestId`. */
function requestLine(requestId: string): Record<string, unknown> {
  const lines = jsonLines().filter((l) => l.msg === 'request' && l.request_id === requestId);
  expect(lines, `one request line for ${requestId}`).toHaveLength(1);
  return lines[0]!;
}

function jsonLines(): Record<string, unknown>[] {
  return output
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

const waitFor = async (check: () => boolean, ms: number) => {
  const until = Date.now() + ms;
  while (!check() && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 50));
};

beforeAll(async () => {
  if (!built) return;
  const distDir = freshProductionBuild();
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of ['DATABASE_URL', 'DATABASE_REPLICA_URL', 'LOG_FORMAT', 'LOG_LEVEL', 'UPSTASH_REDIS_REST_URL', 'UPSTASH_REDIS_REST_TOKEN', 'KV_REST_API_URL', 'KV_REST_API_TOKEN', 'PGLITE_DIR']) delete env[name];
  if (postgres) {
    db = await createPrivatePostgres('logs');
    await seedDemo(db.handle.db);
    const target = new URL(db.url);
    proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
    env.DATABASE_URL = viaPort(db.url, proxy.port);
  } else {
    pgliteDir = mkdtempSync(path.join(os.tmpdir(), 'cda-logs-pglite-'));
    env.PGLITE_DIR = pgliteDir;
    const seed = spawnSync(process.execPath, ['--conditions=react-server', '--import', 'tsx', 'scripts/db-seed.ts', '--reset'], { cwd: ROOT, env, encoding: 'utf8' });
    if (seed.status !== 0) throw new Error(`seeding failed: ${seed.stdout}\n${seed.stderr}`);
  }
  // A webhook receiver that refuses every delivery (the worker's failure path).
  receiver = createServer((_req, res) => res.writeHead(500).end('no'));
  await new Promise<void>((resolve) => receiver!.listen(0, '127.0.0.1', resolve));
  // Limits counted in this process, so that every run starts from zero (a shared Redis
  // keeps the demo user's download quota and the test addresses' failures for up to an
  // hour); what the Redis store logs is tested by rate-limit-store-down.test.ts.
  env.RATE_LIMIT_STORE = 'memory';
  delete env.REDIS_URL;
  server = spawn(process.execPath, [path.join(ROOT, 'node_modules', 'next', 'dist', 'bin', 'next'), 'start', '--hostname', '127.0.0.1', '--port', String(PORT)], {
    cwd: ROOT,
    env: {
      ...env,
      NODE_ENV: 'production',
      NEXT_DIST_DIR: distDir,
      NEXT_TELEMETRY_DISABLED: '1',
      LOG_LEVEL: 'trace', // every line the app can write
      AUTH_SECRET,
      AUTH_TRUST_HOST: 'true',
      MAIL_TRANSPORT: 'log',
      CRON_SECRET,
      WEBHOOK_ENCRYPTION_KEY,
      WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
      TRUSTED_PROXY_HOPS: '1',
      RATE_LIMIT_AUTH_FAILURES_PER_MINUTE: '5',
      RATE_LIMIT_EXPORT_PER_WINDOW: '2',
      RATE_LIMIT_CALENDAR_PER_HOUR: '3',
      RATE_LIMIT_SIGN_IN_ADDRESS_PER_WINDOW: '3',
      // An hour's window and a generous store timeout: on a loaded machine four password
      // checks can straddle a minute (the sliding window then weighs the first ones less) or
      // outlast the 500 ms the limiter waits before failing open, and the fourth got through.
      RATE_LIMIT_SIGN_IN_ADDRESS_WINDOW_SECONDS: '3600',
      RATE_LIMIT_TIMEOUT_MS: '30000',
      REQUEST_DEADLINE_MS: String(DEADLINE_MS),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  server.stdout!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  server.stderr!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const until = Date.now() + 60_000;
  for (;;) {
    try {
      if ((await fetch(`${BASE}/api/v1/openapi.json`)).ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > until || server.exitCode !== null) throw new Error(`next start did not answer:\n${output.slice(-4000)}`);
    await new Promise((resolve) => setTimeout(resolve, 300));
  }
}, 900_000);

afterAll(async () => {
  server?.kill('SIGTERM');
  if (server && server.exitCode === null) await new Promise((resolve) => server!.once('exit', resolve));
  await new Promise((resolve) => (receiver ? receiver.close(resolve) : resolve(undefined)));
  await proxy?.close();
  await db?.drop();
  if (pgliteDir) rmSync(pgliteDir, { recursive: true, force: true });
});

describe.skipIf(!built)('the production server logs one JSON line per request, and no secret', () => {
  let keyId = '';
  let key = '';
  let feedId = '';
  let feed = '';

  it('signs in (a wrong password, the sign-in limit, the right one) and mints a key, a feed and a webhook secret over the session', async () => {
    for (let i = 0; i < 4; i++) {
      const wrong = `wrong-password-${randomBytes(8).toString('hex')}`;
      secrets.set(`wrong password ${i}`, wrong);
      const res = await signIn(DEMO_USERS.alice.email, wrong, PASSWORD_GUESSER);
      expect([302, 429]).toContain(res.status);
      if (i === 3) {
        expect(res.status).toBe(429);
        expect(requestLine(res.requestId)).toMatchObject({ route: '/api/auth/[...nextauth]', status: 429, error_code: 'rate_limited', client_address: PASSWORD_GUESSER });
      }
    }
    cookies = '';
    const signedIn = await signIn(DEMO_USERS.alice.email, DEMO_PASSWORD);
    expect(signedIn.status).toBe(302);
    keepCookies(signedIn);
    const session = /authjs\.session-token=([^;]+)/.exec(cookies)?.[1];
    expect(session, 'a session cookie').toBeTruthy();
    secrets.set('the session cookie', session!);
    const csrfCookie = /authjs\.csrf-token=([^;]+)/.exec(cookies)?.[1];
    if (csrfCookie) secrets.set('the CSRF cookie', decodeURIComponent(csrfCookie));
    const line = requestLine(signedIn.requestId);
    expect(line).toMatchObject({ method: 'POST', route: '/api/auth/[...nextauth]', status: 302, error_code: null, client_address: CLIENT, user_agent: USER_AGENT });

    const created = await trpc<{ secret: string; token: { id: string } }>('apiKeys.create', { name: 'logs', expiresInDays: 30 });
    key = created.secret;
    keyId = created.token.id;
    secrets.set('the API key', key);
    const revoked = await trpc<{ secret: string; token: { id: string } }>('apiKeys.create', { name: 'revoked', expiresInDays: 30 });
    secrets.set('the revoked API key', revoked.secret);
    await trpc('apiKeys.revoke', { id: revoked.token.id });

    const feedCreated = await trpc<{ url: string; token: { id: string } }>('calendarFeeds.create', { name: 'logs' });
    feed = /\/calendar\/([^/]+)\.ics$/.exec(new URL(feedCreated.url).pathname)![1]!;
    feedId = feedCreated.token.id;
    secrets.set('the feed token', feed);
    const revokedFeed = await trpc<{ url: string; token: { id: string } }>('calendarFeeds.create', { name: 'revoked' });
    secrets.set('the revoked feed token', /\/calendar\/([^/]+)\.ics$/.exec(new URL(revokedFeed.url).pathname)![1]!);
    await trpc('calendarFeeds.revoke', { id: revokedFeed.token.id });

    const endpoint = await trpc<{ secret: string; endpoint: { id: string } }>('webhooks.create', { url: `http://127.0.0.1:${(receiver!.address() as AddressInfo).port}/hook` });
    secrets.set('the webhook secret', endpoint.secret);
    const rotated = await trpc<{ secret: string }>('webhooks.rotateSecret', { id: endpoint.endpoint.id });
    secrets.set('the rotated webhook secret', rotated.secret);
    await trpc('webhooks.sendTest', { id: endpoint.endpoint.id });

    // tRPC's own request line: its route, the session's request (no key).
    const trpcLine = jsonLines().find((l) => l.msg === 'request' && l.route === '/api/trpc/[trpc]' && l.status === 200);
    expect(trpcLine).toMatchObject({ method: 'POST', key_id: null, error_code: null });
    // A malformed session cookie, on next-auth's session route and on the app's endpoint.
    const forged = `${session!.slice(0, -10)}AAAAAAAAAA`;
    secrets.set('a forged session cookie', forged);
    expect((await call('GET', '/api/auth/session', { headers: { Cookie: `authjs.session-token=${forged}` } })).status).toBe(200);
    const refused = await call('POST', '/api/trpc/apiKeys.create', { headers: { Cookie: `authjs.session-token=${forged}`, 'Content-Type': 'application/json' }, body: '{"name":"x"}' });
    expect(refused.status).toBe(401);
    expect(requestLine(refused.requestId)).toMatchObject({ route: '/api/trpc/[trpc]', status: 401, error_code: 'unauthorized' });
  });

  it('a valid key: the request line names the route template, the key id, the status, the bytes', async () => {
    const contract = '00000000-0000-4000-8000-000000000000';
    for (const headers of [{ 'X-API-Key': key }, { Authorization: `Bearer ${key}` }] as Record<string, string>[]) {
      const res = await call('GET', `/api/v1/contracts?limit=5&organization_id=${DEMO_ORGS.acme.id}`, { headers });
      expect(res.status).toBe(200);
      const line = requestLine(res.requestId);
      expect(line).toMatchObject({
        level: 'info',
        request_id: res.requestId,
        trace_id: null,
        method: 'GET',
        route: '/api/v1/contracts',
        status: 200,
        error_code: null,
        bytes: res.bytes,
        key_id: keyId,
        client_address: CLIENT,
        user_agent: USER_AGENT,
      });
      expect(typeof line.duration_ms).toBe('number');
      expect(line.duration_ms).toBeGreaterThan(0);
      expect(new Date(line.time as string).getTime()).toBeGreaterThan(Date.now() - 120_000);
    }
    const missing = await call('GET', `/api/v1/contracts/${contract}`, { headers: { 'X-API-Key': key } });
    expect(missing.status).toBe(404);
    expect(requestLine(missing.requestId)).toMatchObject({ route: '/api/v1/contracts/{id}', status: 404, error_code: 'not_found', key_id: keyId });
    const head = await call('HEAD', '/api/v1/contracts?limit=1', { headers: { 'X-API-Key': key } });
    expect(requestLine(head.requestId)).toMatchObject({ method: 'HEAD', route: '/api/v1/contracts', status: 200, bytes: 0 });
  });

  it('the export: a streamed body, counted as it is sent; its quota runs out (429 with the key id)', async () => {
    const exports: Answer[] = [];
    for (let i = 0; i < 3; i++) exports.push(await call('POST', '/api/v1/contracts/export', { headers: { 'X-API-Key': key }, body: `{"organization_id":"${DEMO_ORGS.acme.id}"}` }));
    expect(exports.map((e) => e.status)).toEqual([200, 200, 429]);
    await waitFor(() => jsonLines().some((l) => l.request_id === exports[0]!.requestId && l.msg === 'request'), 2_000);
    expect(requestLine(exports[0]!.requestId)).toMatchObject({ route: '/api/v1/contracts/export', status: 200, bytes: exports[0]!.bytes, key_id: keyId });
    expect(exports[0]!.bytes).toBeGreaterThan(100);
    expect(requestLine(exports[2]!.requestId)).toMatchObject({ status: 429, error_code: 'rate_limited', key_id: keyId });
  });

  it('bad keys: malformed, unknown, revoked, then the address is out of attempts (429)', async () => {
    const bad = [
      'not-a-key',
      `cdapi_${randomBytes(30).toString('base64url').replace(/[-_]/g, 'x').slice(0, 38)}`,
      secrets.get('the revoked API key')!,
      key.toLowerCase(),
      `${key.slice(0, -1)}${key.endsWith('A') ? 'B' : 'A'}`,
    ];
    bad.forEach((b, i) => secrets.set(`bad key ${i}`, b));
    const answers: Answer[] = [];
    for (const b of [...bad, ...bad]) answers.push(await call('GET', '/api/v1/contracts?limit=1', { from: GUESSER, headers: { 'X-API-Key': b } }));
    expect(answers.slice(0, 5).map((a) => a.status)).toEqual([401, 401, 401, 401, 401]);
    expect(answers.at(-1)!.status).toBe(429);
    expect(requestLine(answers[2]!.requestId)).toMatchObject({ status: 401, error_code: 'unauthorized', key_id: null, client_address: GUESSER });
    expect(requestLine(answers.at(-1)!.requestId)).toMatchObject({ status: 429, error_code: 'rate_limited', key_id: null });
    // The valid key from that address: 429 too (a guess cannot be told from a miss).
    expect((await call('GET', '/api/v1/contracts?limit=1', { from: GUESSER, headers: { 'X-API-Key': key } })).status).toBe(429);
  });

  it('calendar feeds: the route template, never the token; a revoked or mistyped token 404; the feed limit 429', async () => {
    const ok = await call('GET', `/api/v1/calendar/${feed}.ics`);
    expect(ok.status).toBe(200);
    expect(requestLine(ok.requestId)).toMatchObject({ route: '/api/v1/calendar/{token}.ics', status: 200, key_id: feedId, bytes: ok.bytes });
    const revoked = await call('GET', `/api/v1/calendar/${secrets.get('the revoked feed token')!}.ics`);
    expect(revoked.status).toBe(404);
    const mistyped = `${feed.slice(0, -2)}zz`;
    secrets.set('a mistyped feed token', mistyped);
    expect((await call('GET', `/api/v1/calendar/${mistyped}.ics`)).status).toBe(404);
    expect((await call('GET', `/api/v1/calendar/${feed}`)).status).toBe(404);
    const limited = [await call('GET', `/api/v1/calendar/${feed}.ics`), await call('GET', `/api/v1/calendar/${feed}.ics`), await call('GET', `/api/v1/calendar/${feed}.ics`)];
    expect(limited.at(-1)!.status).toBe(429);
    expect(requestLine(limited.at(-1)!.requestId)).toMatchObject({ route: '/api/v1/calendar/{token}.ics', error_code: 'rate_limited', key_id: feedId });
  });

  it('unknown paths, wrong methods, the cron route, the contracts download and the API reference assets', async () => {
    const unknown = await call('GET', `/api/v1/no/such/${key}`);
    expect(unknown.status).toBe(404);
    expect(requestLine(unknown.requestId)).toMatchObject({ route: '/api/v1/[[...path]]', error_code: 'not_found' });
    const wrongMethod = await call('DELETE', '/api/v1/contracts', { headers: { 'X-API-Key': key } });
    expect(requestLine(wrongMethod.requestId)).toMatchObject({ route: '/api/v1/contracts', status: 405, error_code: 'method_not_allowed' });
    const wrongCron = await call('GET', '/api/cron/webhooks', { headers: { Authorization: `Bearer ${key}` } });
    expect(requestLine(wrongCron.requestId)).toMatchObject({ route: '/api/cron/webhooks', status: 401, error_code: 'unauthorized' });
    const cron = await call('GET', '/api/cron/webhooks', { headers: { Authorization: `Bearer ${CRON_SECRET}` } });
    expect(cron.status).toBe(200);
    expect(requestLine(cron.requestId)).toMatchObject({ route: '/api/cron/webhooks', status: 200, bytes: cron.bytes });
    const download = await call('GET', '/contracts/export?status=completed', { session: true, headers: { 'Sec-Fetch-Site': 'same-origin' } });
    expect(download.status).toBe(200);
    await waitFor(() => jsonLines().some((l) => l.request_id === download.requestId && l.msg === 'request'), 2_000);
    expect(requestLine(download.requestId)).toMatchObject({ route: '/contracts/export', status: 200, bytes: download.bytes });
    const asset = await call('GET', '/docs/api/assets/nothing.js');
    expect(requestLine(asset.requestId)).toMatchObject({ route: '/docs/api/assets/[file]', status: 404 });
  });

  it("pages: one line each (a GET, a redirect, a 404, a server action), with the page's template and never its path or query", async () => {
    const queryToken = `page-query-token-${randomBytes(12).toString('hex')}`;
    secrets.set('a token in a page query', queryToken);
    const signInPage = await page('GET', `/sign-in?callbackUrl=%2Fsettings&token=${queryToken}`);
    expect(signInPage.status).toBe(200);
    expect(signInPage.requestId).toMatch(/^req_[0-9a-f]{32}$/);
    const line = requestLine(signInPage.requestId);
    expect(line).toMatchObject({ level: 'info', method: 'GET', route: '/sign-in', status: 200, error_code: null, key_id: null, client_address: CLIENT, user_agent: USER_AGENT });
    expect(line.duration_ms).toBeGreaterThan(0);

    const contractPath = `/contracts/${randomBytes(16).toString('hex')}`;
    const contract = await page('GET', contractPath, { session: true });
    expect(requestLine(contract.requestId)).toMatchObject({ route: '/contracts/[id]', status: contract.status });
    const settings = await page('GET', '/settings/api-keys');
    expect([303, 307, 308]).toContain(settings.status);
    expect(requestLine(settings.requestId)).toMatchObject({ route: '/settings/api-keys', status: settings.status });
    const missing = await page('GET', `/no/such/page/${queryToken}`);
    expect(missing.status).toBe(404);
    expect(requestLine(missing.requestId)).toMatchObject({ route: 'unmatched', status: 404 });
    // A server action's POST (one that does not exist: Next.js answers it itself).
    const action = await page('POST', '/sign-in', { headers: { 'Next-Action': '7f00000000000000000000000000000000000000', 'Content-Type': 'text/plain;charset=UTF-8' }, body: '[]' });
    expect(requestLine(action.requestId)).toMatchObject({ method: 'POST', route: '/sign-in', status: action.status, server_action: true });

    const lines = () => jsonLines().filter((l) => l.msg === 'request');
    for (const l of lines()) expect(String(l.route)).not.toContain(contractPath.slice(11));
    // Not logged: the probes, Next.js's static files, the app's icon.
    const before = lines().length;
    for (const url of ['/api/health', '/api/health/ready', '/icon.svg']) await fetch(`${BASE}${url}`).then((r) => r.arrayBuffer());
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(lines().length).toBe(before);
  });

  it.skipIf(!postgres)('a database outage (503, logged by code under the request id) and the request deadline (503)', async () => {
    await proxy!.cut();
    try {
      const down = await call('GET', '/api/v1/contracts?limit=1', { headers: { 'X-API-Key': key } });
      expect(down.status).toBe(503);
      expect(requestLine(down.requestId)).toMatchObject({ status: 503, error_code: 'service_unavailable', key_id: keyId });
      const errors = jsonLines().filter((l) => l.request_id === down.requestId && l.level === 'error');
      expect(errors.map((l) => l.msg)).toContain('database unavailable');
    } finally {
      await proxy!.restore();
    }
    // Connections open again, then a database that stops answering on them.
    expect((await call('GET', '/api/v1/contracts?limit=1', { headers: { 'X-API-Key': key } })).status).toBe(200);
    proxy!.freeze();
    try {
      const frozen = await call('GET', `/api/v1/contracts?limit=2&organization_id=${DEMO_ORGS.acme.id}`, { headers: { 'X-API-Key': key } });
      expect(frozen.status).toBe(503);
      expect(requestLine(frozen.requestId)).toMatchObject({ status: 503, error_code: 'service_unavailable' });
      expect(requestLine(frozen.requestId).duration_ms).toBeGreaterThanOrEqual(DEADLINE_MS - 50);
      expect(jsonLines().filter((l) => l.request_id === frozen.requestId && l.level === 'error').map((l) => l.msg)).toContain('request deadline passed: answered 503');
    } finally {
      await proxy!.cut();
      await proxy!.restore();
    }
  });

  it('every answer has its one request line under its X-Request-Id, and every JSON line parses', async () => {
    await waitFor(() => sent.every((s) => jsonLines().some((l) => l.request_id === s.requestId && l.msg === 'request')), 3_000);
    for (const s of sent) {
      expect(s.requestId, `${s.method} answered ${s.status} without X-Request-Id`).toMatch(/^req_[0-9a-f]{32}$/);
      const line = requestLine(s.requestId);
      expect(line.status).toBe(s.status);
      expect(line.method).toBe(s.method);
      expect(line.bytes, `${s.method} ${s.requestId}`).toBe(s.bytes);
    }
  });

  it('no secret, no hash of one, no encoding of one, anywhere in the output', async () => {
    // Let the after-response work (last-used times) and the webhook worker write what they write.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(secrets.size).toBeGreaterThan(15);
    const whole = output;
    expect(whole.length).toBeGreaterThan(1_000);
    for (const [name, secret] of secrets) {
      const forms = new Set([
        secret,
        encodeURIComponent(secret),
        createHash('sha256').update(secret).digest('hex'),
        createHash('sha256').update(secret).digest('base64'),
        createHash('sha256').update(secret).digest('base64url'),
        Buffer.from(secret).toString('base64'),
        Buffer.from(secret).toString('base64url'),
      ]);
      for (const form of forms) expect(whole.includes(form), `${name} (a form of it) is in the server's output`).toBe(false);
    }
  });
});
