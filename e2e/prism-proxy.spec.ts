import { spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import http from 'node:http';
import { createServer, type AddressInfo } from 'node:net';
import path from 'node:path';
import { expect, test } from '@playwright/test';
import { DEMO_ORGS, DEMO_USERS } from '@/db/seed/demo';
import { API } from './support/api';
import { createFeedToken, mintKey, signInOverHttp } from './support/session';

/**
 * A real validating proxy in front of the production server: `prism proxy --errors`
 * (@stoplight/prism-cli, Node 20) with the served OpenAPI document. Prism forwards each
 * request, validates the answer against the document, and with --errors replaces an answer
 * that violates it by a 500 of its own: every exchange below must come back with the
 * API's own status and no `sl-violations` header.
 *
 * Requests are not validated (`--validate-request=false`): the invalid ones are sent on
 * purpose, to check the API's error answers. Two kinds of request never reach the API
 * through Prism, whatever the flags: one without any key (Prism's security check answers
 * it) and a path or method the document does not have (its router answers it); those are
 * covered by the API's own tests. And Prism 5.14 cannot forward HEAD of a JSON answer: it
 * parses the (empty, by definition) body as JSON and answers 500 itself; HEAD is sent here
 * on the calendar, and on the JSON operations it is validated by Prism's validator in the
 * vitest suite (tests/helpers/prism.ts), which knows a HEAD answer has no body.
 */

const ROOT = path.resolve(import.meta.dirname, '..');

let prism: ChildProcess | undefined;
let prismUrl = '';
let prismLog = '';
let documentFile = '';
let key: string;
let feed: string;

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

test.beforeAll(async ({ playwright, baseURL }, testInfo) => {
  test.setTimeout(120_000);
  const session = await playwright.request.newContext({ baseURL });
  await signInOverHttp(session, DEMO_USERS.alice.email);
  key = (await mintKey(session, 'e2e prism proxy')).key;
  feed = await createFeedToken(session, 'e2e prism proxy');
  const document = await session.get(`${API}/openapi.json`);
  expect(document.status()).toBe(200);
  const file = testInfo.outputPath('openapi.json');
  writeFileSync(file, await document.text());
  documentFile = file;
  await session.dispose();

  const port = await freePort();
  prismUrl = `http://127.0.0.1:${port}`;
  prism = spawn(
    path.join(ROOT, 'node_modules', '.bin', 'prism'),
    ['proxy', '--errors', '--validate-request=false', '--cors=false', '--host', '127.0.0.1', '--port', String(port), file, `${baseURL}${API}`],
    { cwd: ROOT, env: { ...process.env, SCARF_ANALYTICS: 'false' }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  prism.stdout!.setEncoding('utf8').on('data', (chunk: string) => (prismLog += chunk));
  prism.stderr!.setEncoding('utf8').on('data', (chunk: string) => (prismLog += chunk));
  for (let i = 0; i < 120; i++) {
    const ready = await fetch(`${prismUrl}/openapi.json`).then((r) => r.status, () => 0);
    if (ready === 200) return;
    await new Promise((r) => setTimeout(r, 500));
  }
  throw new Error(`prism proxy did not start:\n${prismLog.slice(-3000)}`);
});

test.afterAll(() => {
  prism?.kill('SIGTERM');
});

/** One request through Prism; the answer must be the API's, with no violation. */
async function viaPrism(method: string, pathAndQuery: string, options: { headers?: Record<string, string>; body?: string; key?: string | null } = {}) {
  const headers = new Headers(options.headers);
  if (options.key !== null) headers.set('X-API-Key', options.key ?? key);
  const res = await fetch(`${prismUrl}${pathAndQuery}`, { method, headers, body: options.body });
  const text = await res.text();
  const where = `${method} ${pathAndQuery} -> ${res.status} ${text.slice(0, 500)}\nsl-violations: ${res.headers.get('sl-violations')}`;
  expect(res.headers.get('sl-violations'), where).toBeNull();
  expect(res.headers.get('content-type') ?? '', where).not.toContain('problem+json');
  return { status: res.status, headers: res.headers, text, where };
}

test('every kind of answer passes prism proxy --errors unchanged: 200, 304, HEAD, 400, 401, 403, 404, CSV, calendar', async () => {
  test.setTimeout(120_000);
  const expectStatus = async (status: number, ...args: Parameters<typeof viaPrism>) => {
    const answer = await viaPrism(...args);
    expect(answer.status, answer.where).toBe(status);
    return answer;
  };

  const page = await expectStatus(200, 'GET', '/contracts?limit=2');
  const body = JSON.parse(page.text) as { data: { contracts: { id: string }[]; pagination: { next_cursor: string | null } } };
  const id = body.data.contracts[0]!.id;
  await expectStatus(200, 'GET', `/contracts?limit=2&cursor=${body.data.pagination.next_cursor}`);
  await expectStatus(304, 'GET', '/contracts?limit=2', { headers: { 'If-None-Match': page.headers.get('etag')! } });
  await expectStatus(200, 'GET', '/contracts?limit=1', { key: null, headers: { Authorization: `Bearer ${key}` } });

  const one = await expectStatus(200, 'GET', `/contracts/${id}`);
  await expectStatus(304, 'GET', `/contracts/${id}`, { headers: { 'If-None-Match': one.headers.get('etag')! } });
  await expectStatus(404, 'GET', '/contracts/00000000-0000-4000-8000-000000000000');

  await expectStatus(400, 'GET', '/contracts?limit=0');
  await expectStatus(400, 'GET', '/contracts?stauts=active');
  await expectStatus(400, 'GET', `/contracts/${id}?expand=data`);
  const unauthorized = await expectStatus(401, 'GET', '/contracts', { key: 'cdapi_not_a_real_key' });
  expect(unauthorized.headers.get('www-authenticate')).toContain('Bearer realm=');
  await expectStatus(403, 'GET', `/contracts?organization_id=${DEMO_ORGS.globex.id}`);

  const csv = await expectStatus(200, 'POST', '/contracts/export', { headers: { 'Content-Type': 'application/json' }, body: '{"status":"completed","date_format":"excel"}' });
  expect(csv.text.split('\r\n')[0]).toMatch(/^id,title,status/);
  await expectStatus(400, 'POST', '/contracts/export', { headers: { 'Content-Type': 'application/json' }, body: '{"stauts":"completed"}' });
  await expectStatus(400, 'POST', '/contracts/export?status=completed');

  const calendar = await expectStatus(200, 'GET', `/calendar/${feed}.ics`, { key: null });
  expect(calendar.text.startsWith('BEGIN:VCALENDAR')).toBe(true);
  await expectStatus(304, 'GET', `/calendar/${feed}.ics`, { key: null, headers: { 'If-None-Match': calendar.headers.get('etag')! } });
  await expectStatus(304, 'GET', `/calendar/${feed}.ics`, { key: null, headers: { 'If-Modified-Since': calendar.headers.get('last-modified')! } });
  await expectStatus(200, 'HEAD', `/calendar/${feed}.ics`, { key: null });
  await expectStatus(404, 'GET', '/calendar/cdcal_unknown.ics', { key: null });
  await expectStatus(400, 'GET', `/calendar/${feed}.ics?x=1`, { key: null });

  const document = await expectStatus(200, 'GET', '/openapi.json', { key: null });
  await expectStatus(304, 'GET', '/openapi.json', { key: null, headers: { 'If-None-Match': document.headers.get('etag')! } });
  expect(prismLog, 'Prism logged no violation').not.toMatch(/Violation:/);
});

test('the proxy is live: an upstream answer the document does not describe comes back as Prism\'s violation error', async () => {
  test.setTimeout(60_000);
  // A stand-in for a broken server: a 200 without the envelope, the ETag or the rate-limit headers.
  const broken = http.createServer((_req, res) => {
    res.writeHead(200, { 'Content-Type': 'application/json', 'X-Request-Id': 'req_broken' });
    res.end('{"success":true,"data":{}}');
  });
  await new Promise<void>((resolve) => broken.listen(0, '127.0.0.1', resolve));
  const port = await freePort();
  const second = spawn(
    path.join(ROOT, 'node_modules', '.bin', 'prism'),
    ['proxy', '--errors', '--validate-request=false', '--cors=false', '--host', '127.0.0.1', '--port', String(port), documentFile, `http://127.0.0.1:${(broken.address() as AddressInfo).port}`],
    { cwd: ROOT, stdio: 'ignore' },
  );
  try {
    let answer: Response | undefined;
    for (let i = 0; i < 60 && !answer; i++) {
      answer = await fetch(`http://127.0.0.1:${port}/contracts`, { headers: { 'X-API-Key': key } }).catch(() => undefined);
      if (!answer) await new Promise((r) => setTimeout(r, 500));
    }
    expect(answer!.status).toBe(500);
    expect(answer!.headers.get('content-type')).toContain('application/problem+json');
    expect(await answer!.text()).toMatch(/VIOLATIONS/);
  } finally {
    second.kill('SIGTERM');
    await new Promise<void>((resolve) => broken.close(() => resolve()));
  }
});
