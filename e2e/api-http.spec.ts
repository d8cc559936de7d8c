import { randomUUID } from 'node:crypto';
import { expect, test, type APIRequestContext } from '@playwright/test';
import { SetMatchType } from 'openapi-backend';
import Papa from 'papaparse';
import { DEMO_ORGS, DEMO_USERS, demoContractRows } from '@/db/seed/demo';
import { TOKEN_FORMATS } from '@/server/access/token-format';
import {
  API,
  expectCommonHeaders,
  expectDocumented,
  expectDocumentedErrorEnvelope,
  loadContractDocument,
  neutralised,
  operationId,
  readResponse,
  withoutRequestId,
  type ApiResponse,
  type ContractDocument,
  type ErrorBody,
} from './support/api';
import { mintKey, revokeKey, signInOverHttp } from './support/session';

/**
 * REST API v1 over real HTTP against the production build (issue 4): the access matrix
 * of the demo data in list, get and export, the error statuses and envelopes, and every
 * response validated against the served OpenAPI document.
 */

type UserName = keyof typeof DEMO_USERS;
const USERS: UserName[] = ['alice', 'bob', 'carol'];

// Who is in which organisation, as the demo data describes it (db/seed/demo.ts).
const MEMBERSHIPS: Record<UserName, string[]> = {
  alice: [DEMO_ORGS.acme.id],
  bob: [DEMO_ORGS.acme.id, DEMO_ORGS.globex.id],
  carol: [],
};
const EXPECTED_TOTALS: Record<UserName, number> = { alice: 14, bob: 18, carol: 4 };

const EXPORT_COLUMNS = [
  'id', 'title', 'status', 'file_name', 'file_size', 'created_at', 'updated_at', 'organization_id',
  'expiration_date', 'renewal_date', 'notice_period', 'renewal_term', 'next_renewal_date', 'notice_deadline',
  'auto_renewal', 'contract_value', 'currency', 'provider', 'client', 'summary', 'confidence_score',
];

const ALL_ROWS = demoContractRows();

/** The ids a user may see, in the API's order: created_at descending, then id descending. */
function visibleIds(user: UserName): string[] {
  return ALL_ROWS.filter((row) =>
    row.organizationId ? MEMBERSHIPS[user].includes(row.organizationId) : row.ownerId === DEMO_USERS[user].id,
  )
    .sort((a, b) => b.createdAt!.getTime() - a.createdAt!.getTime() || (a.id! < b.id! ? 1 : a.id! > b.id! ? -1 : 0))
    .map((row) => row.id!);
}

interface ContractSummary {
  id: string;
  title: string;
  status: string;
  file_name: string;
  file_size: number;
  created_at: string;
  updated_at: string;
  organization_id: string | null;
}
interface ContractDetail extends ContractSummary {
  data: {
    expiration_date: string | null;
    renewal_date: string | null;
    notice_period: string | null;
    renewal_term: string | null;
    next_renewal_date: string | null;
    notice_deadline: string | null;
    auto_renewal: boolean | null;
    contract_value: number | null;
    currency: string | null;
    parties: { provider: string | null; client: string | null };
    summary: string | null;
    confidence_score: number | null;
  } | null;
}
interface ListBody {
  success: true;
  data: { contracts: ContractSummary[]; pagination: { limit: number; offset: number; total: number; total_exact: boolean; has_more: boolean; next_cursor: string | null } };
}
interface GetBody {
  success: true;
  data: { contract: ContractDetail };
}

let http: APIRequestContext;
let doc: ContractDocument;
const keys = {} as Record<UserName, string>;
let revokedAliceKey: string;
let LIST: string;
let GET: string;
let EXPORT: string;

async function call<T = unknown>(
  method: 'GET' | 'POST' | 'DELETE',
  path: string,
  options: { key?: string | null; data?: unknown; rawBody?: string } = {},
): Promise<ApiResponse<T>> {
  const headers: Record<string, string> = {};
  if (options.key) headers['X-API-Key'] = options.key;
  if (options.data !== undefined || options.rawBody !== undefined) headers['Content-Type'] = 'application/json';
  const body = options.rawBody ?? (options.data === undefined ? undefined : JSON.stringify(options.data));
  const res = await http.fetch(`${API}${path}`, {
    method,
    headers,
    // A Buffer is sent byte for byte (Playwright would JSON-encode a string that is not JSON).
    data: body === undefined ? undefined : Buffer.from(body, 'utf8'),
    maxRedirects: 0,
  });
  return readResponse<T>(res);
}

/** Calls a documented operation and validates the answer against the document. */
async function documented<T = unknown>(
  opId: string,
  method: 'GET' | 'POST',
  path: string,
  options: { key?: string | null; data?: unknown; rawBody?: string } = {},
): Promise<ApiResponse<T>> {
  const res = await call<T>(method, path, options);
  expectDocumented(doc, opId, res, `${method} ${path}`);
  return res;
}

function expectError(res: ApiResponse, status: number, code: string, param?: string): ErrorBody {
  const body = res.body as ErrorBody;
  expect(res.status, res.text).toBe(status);
  expect(body.error.code).toBe(code);
  expect(body.error.message.length).toBeGreaterThan(0);
  if (param) expect(body.error.details.map((d) => d.param), res.text).toContain(param);
  return body;
}

function parseCsv(text: string): string[][] {
  const parsed = Papa.parse<string[]>(text, { header: false, skipEmptyLines: true });
  expect(parsed.errors, JSON.stringify(parsed.errors)).toEqual([]);
  return parsed.data;
}

/** The export row the API must write for a contract detail (null is an empty cell). */
function expectedCsvRow(c: ContractDetail): string[] {
  const text = (v: string | null | undefined) => (v == null ? '' : neutralised(v));
  const other = (v: number | boolean | null | undefined) => (v == null ? '' : String(v));
  const d = c.data;
  return [
    text(c.id), text(c.title), text(c.status), text(c.file_name), other(c.file_size), text(c.created_at),
    text(c.updated_at), text(c.organization_id), text(d?.expiration_date), text(d?.renewal_date),
    text(d?.notice_period), text(d?.renewal_term), text(d?.next_renewal_date), text(d?.notice_deadline),
    other(d?.auto_renewal), other(d?.contract_value), text(d?.currency), text(d?.parties.provider),
    text(d?.parties.client), text(d?.summary), other(d?.confidence_score),
  ];
}

function utcDate(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

test.beforeAll(async ({ playwright }, testInfo) => {
  const baseURL = testInfo.project.use.baseURL;
  http = await playwright.request.newContext({ baseURL });
  doc = await loadContractDocument(http);
  LIST = operationId(doc, 'GET', '/contracts');
  GET = operationId(doc, 'GET', '/contracts/{id}');
  EXPORT = operationId(doc, 'POST', '/contracts/export');

  // One key per demo user, minted through the session-authenticated tRPC endpoint.
  await Promise.all(
    USERS.map(async (user) => {
      const session = await playwright.request.newContext({ baseURL });
      try {
        await signInOverHttp(session, DEMO_USERS[user].email);
        keys[user] = (await mintKey(session, `e2e http ${user}`)).key;
        if (user === 'alice') {
          const doomed = await mintKey(session, 'e2e http revoked', 7);
          await revokeKey(session, doomed.id);
          revokedAliceKey = doomed.key;
        }
      } finally {
        await session.dispose();
      }
    }),
  );
});

test.afterAll(async () => {
  await http?.dispose();
});

test('the served OpenAPI document describes the operations (HEAD wherever GET), the key header and Bearer', () => {
  expect([...doc.operationIds.keys()].sort()).toEqual([
    'GET /calendar/{token}.ics',
    'GET /contracts',
    'GET /contracts/{id}',
    'GET /events',
    'GET /events/{id}',
    'GET /openapi.json',
    'HEAD /calendar/{token}.ics',
    'HEAD /contracts',
    'HEAD /contracts/{id}',
    'HEAD /events',
    'HEAD /events/{id}',
    'HEAD /openapi.json',
    'POST /contracts/export',
  ]);
  const schemes = (doc.definition.components as { securitySchemes: Record<string, unknown> }).securitySchemes;
  expect(Object.values(schemes)).toContainEqual(expect.objectContaining({ type: 'apiKey', in: 'header', name: 'X-API-Key' }));
  expect(Object.values(schemes)).toContainEqual(expect.objectContaining({ type: 'http', scheme: 'bearer' }));
  expect(String(doc.definition.openapi)).toMatch(/^3\./);

  // The validator is not vacuous: a wrong body, a wrong header or an undocumented status fails.
  expect(doc.api.validateResponse({ success: true, data: {} }, LIST, 200).errors).not.toBeNull();
  expect(doc.api.validateResponse({ success: true, data: { contract: { id: 'x' } } }, GET, 200).errors).not.toBeNull();
  expect(doc.api.validateResponse({ success: false, error: { code: 'nope' } }, GET, 404).errors).not.toBeNull();
  expect(
    doc.api.validateResponseHeaders({ 'x-request-id': 'req_1' }, LIST, { statusCode: 200, setMatchType: SetMatchType.Superset }).errors,
  ).not.toBeNull();
  expect(() =>
    expectDocumented(doc, GET, { status: 418, headers: { 'x-request-id': 'req_1234567890' }, text: '', body: undefined }),
  ).toThrow();
});

test('the served document names the server it was fetched from', async ({ baseURL }) => {
  const servers = doc.definition.servers as { url: string }[];
  expect(servers[0]?.url).toBe(`${baseURL}${API}`);
});

for (const user of USERS) {
  test.describe(`access matrix: ${user}`, () => {
    const expected = visibleIds(user);
    const invisible = ALL_ROWS.map((r) => r.id!).filter((id) => !expected.includes(id));

    test('list shows exactly the personal and organisation contracts, in order, across pages', async () => {
      expect(expected).toHaveLength(EXPECTED_TOTALS[user]);
      const all = await documented<ListBody>(LIST, 'GET', '/contracts?limit=100', { key: keys[user] });
      expect(all.status).toBe(200);
      expect(all.body.success).toBe(true);
      expect(all.body.data.pagination).toEqual({ limit: 100, offset: 0, total: expected.length, total_exact: true, has_more: false, next_cursor: null });
      expect(all.body.data.contracts.map((c) => c.id)).toEqual(expected);
      for (const c of all.body.data.contracts) {
        if (c.organization_id === null) {
          expect(ALL_ROWS.find((r) => r.id === c.id)!.ownerId, `${c.id} is ${user}'s own`).toBe(DEMO_USERS[user].id);
        } else {
          expect(MEMBERSHIPS[user]).toContain(c.organization_id);
        }
      }

      // Default page size and pages of 5: same order, nothing lost or repeated.
      const first = await documented<ListBody>(LIST, 'GET', '/contracts', { key: keys[user] });
      expect(first.body.data.pagination).toEqual({ limit: 50, offset: 0, total: expected.length, total_exact: true, has_more: false, next_cursor: null });
      const paged: string[] = [];
      for (let offset = 0; offset < expected.length; offset += 5) {
        const page = await documented<ListBody>(LIST, 'GET', `/contracts?limit=5&offset=${offset}`, { key: keys[user] });
        const more = offset + 5 < expected.length;
        expect(page.body.data.pagination).toEqual({
          limit: 5,
          offset,
          total: expected.length,
          total_exact: true,
          has_more: more,
          next_cursor: more ? expect.any(String) : null,
        });
        paged.push(...page.body.data.contracts.map((c) => c.id));
      }
      expect(paged).toEqual(expected);
      const past = await documented<ListBody>(LIST, 'GET', `/contracts?offset=${expected.length}`, { key: keys[user] });
      expect(past.body.data).toEqual({
        contracts: [],
        pagination: { limit: 50, offset: expected.length, total: expected.length, total_exact: true, has_more: false, next_cursor: null },
      });
    });

    test('get answers every visible contract and 404s every other one like a nonexistent id', async () => {
      const list = await documented<ListBody>(LIST, 'GET', '/contracts?limit=100', { key: keys[user] });
      for (const summary of list.body.data.contracts) {
        const res = await documented<GetBody>(GET, 'GET', `/contracts/${summary.id}`, { key: keys[user] });
        expect(res.status).toBe(200);
        const { data, ...fields } = res.body.data.contract;
        expect(fields).toEqual(summary);
        if (summary.status === 'completed') expect(data).not.toBeNull();
        else expect(data).toBeNull();
      }

      // The body of an inaccessible id equals that of an id that exists nowhere (an echo
      // of the requested id aside), so the API does not reveal which ids exist.
      const shape = (res: ApiResponse, id: string) => JSON.parse(JSON.stringify(withoutRequestId(res.body)).replaceAll(id, '<id>'));
      const randomId = randomUUID();
      const nonexistent = await documented(GET, 'GET', `/contracts/${randomId}`, { key: keys[user] });
      expectError(nonexistent, 404, 'not_found');
      for (const id of invisible) {
        const res = await documented(GET, 'GET', `/contracts/${id}`, { key: keys[user] });
        expectError(res, 404, 'not_found');
        expect(shape(res, id), `${id} is indistinguishable from a nonexistent id`).toEqual(shape(nonexistent, randomId));
      }
    });

    test('export holds the same contracts as the list, in the same order, as documented CSV', async () => {
      const list = await documented<ListBody>(LIST, 'GET', '/contracts?limit=100', { key: keys[user] });
      const before = Date.now();
      const res = await documented(EXPORT, 'POST', '/contracts/export', { key: keys[user] });
      const after = Date.now();
      expect(res.status, res.text).toBe(200);
      expect(res.headers['content-type']).toBe('text/csv; charset=utf-8');
      const disposition = res.headers['content-disposition'];
      expect([utcDate(before), utcDate(after)].map((d) => `attachment; filename="contracts-${d}.csv"`)).toContain(disposition);

      expect(res.text.endsWith('\r\n'), 'RFC 4180 line ends').toBe(true);
      const [header, ...rows] = parseCsv(res.text);
      expect(header).toEqual(EXPORT_COLUMNS);
      expect(rows).toHaveLength(list.body.data.pagination.total);
      expect(rows.map((r) => r[0])).toEqual(list.body.data.contracts.map((c) => c.id));

      // Every cell, against the detail of the same contract.
      for (const row of rows) {
        const detail = await documented<GetBody>(GET, 'GET', `/contracts/${row[0]}`, { key: keys[user] });
        expect(row, `CSV row of ${row[0]}`).toEqual(expectedCsvRow(detail.body.data.contract));
      }

      // No body, an empty body and {} are the same request.
      for (const options of [{ data: {} }, { rawBody: '' }]) {
        const same = await documented(EXPORT, 'POST', '/contracts/export', { key: keys[user], ...options });
        expect(same.text).toBe(res.text);
      }
    });
  });
}

test('export neutralises formula-like text and keeps quotes, commas and newlines (alice)', async () => {
  const res = await documented(EXPORT, 'POST', '/contracts/export', { key: keys.alice });
  const rows = parseCsv(res.text);
  const col = (name: string) => EXPORT_COLUMNS.indexOf(name);
  const hyperlink = rows.find((r) => r[col('file_name')] === 'suspicious.pdf')!;
  expect(hyperlink[col('title')]).toBe(`'=HYPERLINK("http://evil.example","Click")`);
  expect(hyperlink[col('provider')]).toBe(`'@Provider Ltd`);
  expect(hyperlink[col('client')]).toBe(`'+Client, Inc.`);
  expect(hyperlink[col('summary')]).toBe(`'-Summary that starts with a minus sign.`);
  expect(hyperlink[col('contract_value')]).toBe('950.5');
  // The raw bytes: the title cell starts with the apostrophe inside its quotes.
  expect(res.text).toContain(`"'=HYPERLINK(""http://evil.example"",""Click"")"`);
  expect(res.text).not.toMatch(/(^|,)=HYPERLINK/m);

  const lease = rows.find((r) => r[col('file_name')] === 'bail-appartement.pdf')!;
  expect(lease[col('title')]).toBe('Apartment Lease, "Rue de Rivoli"');
  expect(lease[col('summary')]).toBe('Unfurnished lease, three years.\nNotice period: three months.');
});

test('filters by organisation: members get its contracts, others get 403', async () => {
  const acme = visibleIds('alice').filter((id) => ALL_ROWS.find((r) => r.id === id)!.organizationId === DEMO_ORGS.acme.id);
  const ok = await documented<ListBody>(LIST, 'GET', `/contracts?limit=100&organization_id=${DEMO_ORGS.acme.id}`, {
    key: keys.alice,
  });
  expect(ok.body.data.contracts.map((c) => c.id)).toEqual(acme);
  expect(ok.body.data.pagination.total).toBe(acme.length);
  const okCsv = await documented(EXPORT, 'POST', '/contracts/export', { key: keys.bob, data: { organization_id: DEMO_ORGS.acme.id } });
  expect(parseCsv(okCsv.text).slice(1).map((r) => r[0])).toEqual(acme);

  const list = await documented(LIST, 'GET', `/contracts?organization_id=${DEMO_ORGS.acme.id}`, { key: keys.carol });
  expectError(list, 403, 'forbidden');
  const exported = await documented(EXPORT, 'POST', '/contracts/export', { key: keys.carol, data: { organization_id: DEMO_ORGS.acme.id } });
  expectError(exported, 403, 'forbidden');
  const globex = await documented(LIST, 'GET', `/contracts?organization_id=${DEMO_ORGS.globex.id}`, { key: keys.alice });
  expectError(globex, 403, 'forbidden');
});

test('an invalid UUID is a 400 that names the parameter', async () => {
  expectError(await documented(LIST, 'GET', '/contracts?organization_id=not-a-uuid', { key: keys.alice }), 400, 'invalid_request', 'organization_id');
  expectError(await documented(GET, 'GET', '/contracts/not-a-uuid', { key: keys.alice }), 400, 'invalid_request', 'id');
  expectError(
    await documented(EXPORT, 'POST', '/contracts/export', { key: keys.alice, data: { organization_id: 'not-a-uuid' } }),
    400,
    'invalid_request',
    'organization_id',
  );
});

test('missing, garbage, unknown and revoked keys get the same 401', async () => {
  const someId = visibleIds('alice')[0]!;
  const badKeys: Record<string, string | null> = {
    missing: null,
    garbage: 'garbage',
    'well-formed but unknown': TOKEN_FORMATS.api_key.generate(),
    revoked: revokedAliceKey,
  };
  for (const [op, method, path] of [
    [LIST, 'GET', '/contracts'],
    [GET, 'GET', `/contracts/${someId}`],
    [EXPORT, 'POST', '/contracts/export'],
  ] as const) {
    const bodies: unknown[] = [];
    for (const [kind, key] of Object.entries(badKeys)) {
      const res = await documented(op, method, path, { key });
      expectError(res, 401, 'unauthorized');
      expect(res.text, `${kind} key`).not.toContain(someId);
      bodies.push(withoutRequestId(res.body));
    }
    for (const body of bodies) expect(body, `${method} ${path}`).toEqual(bodies[0]);
  }
  // The revoked key really belonged to alice, whose other key works.
  expect((await documented(LIST, 'GET', '/contracts', { key: keys.alice })).status).toBe(200);
});

test('unknown paths are 404 JSON and wrong methods 405 JSON with Allow', async () => {
  for (const path of ['/unknown', '/contracts/export/extra', '/contracts/a/b', '']) {
    const res = await call('GET', path, { key: keys.alice });
    expect(res.status, `GET ${API}${path}`).toBe(404);
    expectDocumentedErrorEnvelope(doc, res, `GET ${API}${path}`);
    expect((res.body as ErrorBody).error.code).toBe('not_found');
  }

  const del = await call('DELETE', '/contracts', { key: keys.alice });
  expect(del.status).toBe(405);
  expectDocumentedErrorEnvelope(doc, del, 'DELETE /contracts');
  expect((del.body as ErrorBody).error.code).toBe('method_not_allowed');
  expect(del.headers.allow?.split(',').map((m) => m.trim())).toContain('GET');
  expect(del.headers.allow).not.toContain('DELETE');

  const getExport = await call('GET', '/contracts/export', { key: keys.alice });
  expect(getExport.status).toBe(405);
  expectDocumentedErrorEnvelope(doc, getExport, 'GET /contracts/export');
  expect((getExport.body as ErrorBody).error.code).toBe('method_not_allowed');
  expect(getExport.headers.allow).toBe('POST');
});

test('every response carries a distinct X-Request-Id', async () => {
  const ids = new Set<string>();
  const responses = [
    await call('GET', '/contracts', { key: keys.bob }),
    await call('GET', '/contracts', {}),
    await call('POST', '/contracts/export', { key: keys.bob }),
    await call('GET', '/nope', { key: keys.bob }),
    await call('DELETE', '/contracts', { key: keys.bob }),
  ];
  for (const res of responses) {
    expectCommonHeaders(res, `status ${res.status}`);
    ids.add(res.headers['x-request-id']!);
  }
  expect(ids.size).toBe(responses.length);
});

test('over real HTTP through next start: Bearer keys, WWW-Authenticate, unknown parameters, ETag and 304 (compression or not)', async () => {
  const send = (path: string, headers: Record<string, string>) => http.fetch(`${API}${path}`, { headers, maxRedirects: 0 });
  const bearer = await send('/contracts?limit=2', { Authorization: `Bearer ${keys.alice}`, 'Accept-Encoding': 'gzip, br' });
  expect(bearer.status()).toBe(200);
  const etag = bearer.headers().etag!;
  expect(etag).toMatch(/^W\/"/);
  expect(bearer.headers()['cache-control']).toBe('private, no-cache');
  expect(bearer.headers().vary).toContain('X-API-Key');
  // The same tag, whether the answer was compressed or not, and a 304 without a body.
  const plain = await send('/contracts?limit=2', { 'X-API-Key': keys.alice, 'Accept-Encoding': 'identity' });
  expect(plain.headers().etag).toBe(etag);
  const notModified = await send('/contracts?limit=2', { 'X-API-Key': keys.alice, 'If-None-Match': etag, 'Accept-Encoding': 'gzip' });
  expect(notModified.status()).toBe(304);
  expect((await notModified.body()).length).toBe(0);
  expect(notModified.headers().etag).toBe(etag);
  // A 304 costs no quota: what is left is not lower than after the 200 before it (the
  // sliding window may have freed a request in between: higher is fine, one lower is a charge).
  expect(Number(notModified.headers()['x-ratelimit-remaining'])).toBeGreaterThanOrEqual(Number(plain.headers()['x-ratelimit-remaining']));

  const refused = await send('/contracts', { Authorization: 'Bearer cdapi_nope' });
  expect(refused.status()).toBe(401);
  expect(refused.headers()['www-authenticate']).toBe('Bearer realm="Contract Data API", ApiKey realm="Contract Data API", header="X-API-Key"');
  const typo = await send('/contracts?stauts=active', { 'X-API-Key': keys.alice });
  expect(typo.status()).toBe(400);
  expect(((await typo.json()) as ErrorBody).error.details).toEqual([expect.objectContaining({ param: 'stauts' })]);
});
