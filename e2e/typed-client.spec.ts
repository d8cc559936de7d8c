import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { expect, test } from '@playwright/test';
import Papa from 'papaparse';
import postgres from 'postgres';
import { createContractDataClient, sync, type ContractDetail } from '@/clients/typescript/src/index';
import { DEMO_USERS } from '@/db/seed/demo';
import { API } from './support/api';
import { describeRun, runProcess } from './support/child-process';
import { mintKey, signInOverHttp } from './support/session';

/**
 * The typed client's example (clients/typescript/examples/export-all.ts) run as a user
 * runs it, against the production server: it lists, pages through every contract and
 * exports them to a CSV file. A second run goes through a proxy that answers the first
 * list and the first export request with 429 and Retry-After: 1, which the example must
 * wait out.
 */

const ROOT = path.resolve(import.meta.dirname, '..');
const EXAMPLE = path.join(ROOT, 'clients', 'typescript', 'examples', 'export-all.ts');

let apiKey: string;
let total: number;

test.beforeAll(async ({ playwright, baseURL }) => {
  const session = await playwright.request.newContext({ baseURL });
  // bob sees the most demo contracts (personal and two organisations).
  await signInOverHttp(session, DEMO_USERS.bob.email);
  apiKey = (await mintKey(session, 'e2e typed client example')).key;
  const list = await session.get(`${API}/contracts?limit=1`, { headers: { 'X-API-Key': apiKey } });
  expect(list.status()).toBe(200);
  total = ((await list.json()) as { data: { pagination: { total: number } } }).data.pagination.total;
  await session.dispose();
});

function runExample(apiUrl: string, outFile: string, extraArgs: string[] = []) {
  return runProcess(process.execPath, ['--import', 'tsx', EXAMPLE, outFile, ...extraArgs], {
    cwd: ROOT,
    env: { CONTRACT_API_URL: apiUrl, CDAPI_KEY: apiKey },
  });
}

function expectCsvOfAll(file: string, expectedRows: number) {
  const text = readFileSync(file, 'utf8');
  expect(text.startsWith('\uFEFF'), 'the example asks for a byte order mark').toBe(true);
  const rows = Papa.parse<Record<string, string>>(text.slice(1), { header: true, skipEmptyLines: true });
  expect(rows.errors).toEqual([]);
  expect(rows.data).toHaveLength(expectedRows);
  expect(new Set(rows.data.map((r) => r.id)).size, 'no contract twice').toBe(expectedRows);
}

test('the example lists, pages through every contract and exports them to a CSV file', async ({ baseURL }, testInfo) => {
  // Pages of 5, so that the demo data takes several pages and a last partial one.
  const out = testInfo.outputPath('contracts.csv');
  const result = await runExample(`${baseURL}${API}`, out, ['--page-size=5']);
  expect(result.code, describeRun('example', result)).toBe(0);
  expect(result.stdout).toContain(`${total} contracts; the newest 5:`);
  expect(result.stdout).toContain(`Paged through ${total} contracts in ${Math.ceil(total / 5)} pages`);
  expect(result.stdout).toContain(`Exported to ${out}`);
  expect(result.stderr, 'no retries against the real server').toBe('');
  expectCsvOfAll(out, total);

  const filtered = testInfo.outputPath('completed.csv');
  const completed = await runExample(`${baseURL}${API}`, filtered, ['--status=completed']);
  expect(completed.code, describeRun('example --status=completed', completed)).toBe(0);
  const rows = Papa.parse<Record<string, string>>(readFileSync(filtered, 'utf8').slice(1), { header: true, skipEmptyLines: true });
  expect(rows.data.length).toBeGreaterThan(0);
  expect(rows.data.length).toBeLessThan(total);
  expect(rows.data.every((r) => r.status === 'completed')).toBe(true);
});

test('the example waits out 429 answers for as long as Retry-After says', async ({ baseURL }, testInfo) => {
  const upstream = new URL(baseURL!);
  const refused = new Set<string>();
  const seen: string[] = [];
  // Forwards everything to the server, except that the first list and the first export
  // request get the API's 429 (same envelope and headers as a real one).
  const proxy = http.createServer((req, res) => {
    const route = `${req.method} ${new URL(req.url!, 'http://proxy').pathname}`;
    seen.push(route);
    if ((route === `GET ${API}/contracts` || route === `POST ${API}/contracts/export`) && !refused.has(route)) {
      refused.add(route);
      req.resume();
      res.writeHead(429, {
        'Content-Type': 'application/json; charset=utf-8',
        'Retry-After': '1',
        'X-Request-Id': `req_proxy_${refused.size}`,
      });
      res.end(
        JSON.stringify({
          success: false,
          error: { code: 'rate_limited', message: 'Rate limit exceeded; retry after 1 seconds.', details: [] },
          request_id: `req_proxy_${refused.size}`,
        }),
      );
      return;
    }
    const forward = http.request(
      { host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: { ...req.headers, host: upstream.host } },
      (answer) => {
        res.writeHead(answer.statusCode!, answer.headers);
        answer.pipe(res);
      },
    );
    forward.on('error', () => res.destroy());
    req.pipe(forward);
  });
  // An ephemeral loopback port, chosen by the system: nothing else can hold it.
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  try {
    const { port } = proxy.address() as AddressInfo;
    const out = testInfo.outputPath('contracts.csv');
    const result = await runExample(`http://127.0.0.1:${port}${API}`, out, ['--page-size=5']);
    expect(result.code, describeRun('example through the 429 proxy', result)).toBe(0);
    const waits = result.stderr.split('\n').filter((line) => line.startsWith('HTTP 429: waiting 1 s as Retry-After asks'));
    expect(waits, result.stderr).toHaveLength(2);
    expect(result.ms, 'two waits of one second each').toBeGreaterThanOrEqual(2000);
    expect(refused).toEqual(new Set([`GET ${API}/contracts`, `POST ${API}/contracts/export`]));
    // Each refused request was sent again: one list request and one export more than the run needs.
    expect(seen.filter((r) => r === `GET ${API}/contracts`)).toHaveLength(1 + Math.ceil(total / 5) + 1);
    expect(seen.filter((r) => r === `POST ${API}/contracts/export`)).toHaveLength(2);
    expectCsvOfAll(out, total);
  } finally {
    await new Promise<void>((resolve) => proxy.close(() => resolve()));
  }
});

test('sync keeps a copy: an NDJSON export, then the event list from its X-Events-Cursor', async ({ baseURL }) => {
  const client = createContractDataClient({ baseUrl: `${baseURL}${API}`, apiKey });
  const copy = new Map<string, ContractDetail>();
  const store = { get: (id: string) => copy.get(id), upsert: (c: ContractDetail) => void copy.set(c.id, c), delete: (id: string) => void copy.delete(id), clear: () => copy.clear(), ids: () => copy.keys() };
  const first = await sync(client, { store });
  expect(first.exports).toBe(1);
  expect(copy.size).toBe(total);
  const some = [...copy.values()][0]!;
  const one = await client.GET('/contracts/{id}', { params: { path: { id: some.id } } });
  expect(one.data?.data.contract, 'the copy holds the get-one detail').toEqual(some);
  // Again from the saved cursor: no export, the same copy.
  const again = await sync(client, { store, cursor: first.cursor });
  expect(again.exports).toBe(0);
  expect(copy.size).toBe(total);

  // A change by another connection reaches the copy with the next sync (Postgres only: the
  // embedded database allows no second connection; tests/api/sync-convergence.test.ts covers both).
  if (!process.env.DATABASE_URL) return;
  const sql = postgres(process.env.DATABASE_URL, { max: 1 });
  try {
    await sql`UPDATE contracts SET title = title || ' (sync e2e)' WHERE id = ${some.id}`;
    const changed = await sync(client, { store, cursor: again.cursor });
    expect(changed.events).toBeGreaterThanOrEqual(1);
    expect(copy.get(some.id)!.title).toBe(`${some.title} (sync e2e)`);
    await sql`UPDATE contracts SET title = ${some.title} WHERE id = ${some.id}`;
    await sync(client, { store, cursor: changed.cursor });
    expect(copy.get(some.id)!.title).toBe(some.title);
    expect(copy.size).toBe(total);
  } finally {
    await sql.end();
  }
});
