import Papa from 'papaparse';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '@/db/client';
import { setProcessDatabase } from '@/server/database';
import { contracts, users } from '@/db/schema';
import { DEMO_ORGS, DEMO_USERS, demoContractRows, seedDemo } from '@/db/seed/demo';
import { EXPORT_COLUMNS } from '@/server/contracts/shape';
import { renewalDecision } from '@/lib/renewal-dates';
import { utcToday } from '@/server/dates';
import { buildOpenApiDocument } from '@/server/rest/openapi-document';
import { handleApiRequest } from '@/server/rest/router';
import { CLIENT_ADDRESS, PROXY_CLIENT_ADDRESS } from '../helpers/api';
import { configureForFile } from '../helpers/config';
import { createTestDatabase } from '../helpers/db';
import { createResponseValidator, type ApiResponse } from '../helpers/openapi-validator';
import { newApiKey, revokeApiKey } from '../helpers/tokens';

// These tests send many bad keys from one address; the per-address limit on failed
// authentication has its own tests. As through a proxy that sets X-Real-IP, with an
// address of this file's own: without a trusted source all requests share one failure
// bucket, and with REDIS_URL these bad keys would count against every other test file.
configureForFile({
  ...PROXY_CLIENT_ADDRESS,
  RATE_LIMIT_AUTH_FAILURES_PER_MINUTE: '100000',
  RATE_LIMIT_GENERAL_PER_WINDOW: '100000',
  RATE_LIMIT_EXPORT_PER_WINDOW: '100000',
});

const BASE = 'http://localhost:3000';
let handle: DatabaseHandle;
let validate: Awaited<ReturnType<typeof createResponseValidator>>;
const keys: Record<string, string> = {};

beforeAll(async () => {
  handle = await createTestDatabase();
  setProcessDatabase(handle);
  await seedDemo(handle.db);
  for (const user of ['alice', 'bob', 'carol'] as const) {
    keys[user] = (await newApiKey(handle.db, DEMO_USERS[user].id)).key;
  }
  validate = await createResponseValidator(buildOpenApiDocument(BASE));
});
afterAll(async () => handle?.close());

/** One request through the API's router, checked against the OpenAPI document. */
async function call(
  method: string,
  pathAndQuery: string,
  options: { key?: string | null; body?: string; headers?: Record<string, string> } = {},
): Promise<ApiResponse> {
  const headers = new Headers(options.headers);
  if (!headers.has('x-real-ip')) headers.set('X-Real-IP', CLIENT_ADDRESS);
  if (options.key !== null) headers.set('X-API-Key', options.key ?? keys.alice!);
  const req = new Request(`${BASE}/api/v1${pathAndQuery}`, { method, headers, body: options.body });
  const path = new URL(req.url).pathname;
  const res = await handleApiRequest(req);
  const text = await res.text();
  const isJson = res.headers.get('content-type')?.startsWith('application/json');
  const response = { status: res.status, headers: res.headers, text, json: isJson ? JSON.parse(text) : undefined };
  expect(res.headers.get('x-request-id')).toMatch(/^req_[0-9a-f]{32}$/);
  if (response.json && res.status >= 400) {
    expect((response.json as { request_id: string }).request_id).toBe(res.headers.get('x-request-id'));
  }
  validate(method, path.slice('/api/v1'.length), response);
  return response;
}

type ListBody = {
  data: { contracts: { id: string; created_at: string; organization_id: string | null; status: string }[]; pagination: { limit: number; offset: number; total: number; next_cursor: string | null; has_more: boolean } };
};
type ErrorBody = { success: false; error: { code: string; message: string; details: { param?: string; message: string }[] } };

function visibleIds(user: keyof typeof DEMO_USERS): string[] {
  const orgs = Object.values(DEMO_ORGS)
    .filter((o) => (user === 'alice' ? o === DEMO_ORGS.acme : user === 'bob'))
    .map((o) => o.id);
  return demoContractRows()
    .filter((c) => (c.organizationId ? orgs.includes(c.organizationId) : c.ownerId === DEMO_USERS[user].id))
    .sort((a, b) => b.createdAt!.getTime() - a.createdAt!.getTime() || (a.id! < b.id! ? 1 : -1))
    .map((c) => c.id!);
}

describe('GET /api/v1/contracts', () => {
  it('answers the spec envelope with defaults limit 50, offset 0, newest first', async () => {
    const res = await call('GET', '/contracts');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
    const body = res.json as ListBody & { success: boolean };
    expect(body.success).toBe(true);
    expect(body.data.pagination).toEqual({ limit: 50, offset: 0, total: visibleIds('alice').length, total_exact: true, next_cursor: null, has_more: false });
    expect(body.data.contracts.map((c) => c.id)).toEqual(visibleIds('alice'));
    expect(Object.keys(body.data.contracts[0]!).sort()).toEqual(
      ['created_at', 'file_name', 'file_size', 'id', 'organization_id', 'status', 'title', 'updated_at'].sort(),
    );
  });

  it.each(['alice', 'bob', 'carol'] as const)('shows %s exactly their personal plus organisation contracts', async (user) => {
    const body = (await call('GET', '/contracts?limit=100', { key: keys[user] })).json as ListBody;
    expect(body.data.contracts.map((c) => c.id)).toEqual(visibleIds(user));
    expect(body.data.pagination.total).toBe(visibleIds(user).length);
  });

  it.each([
    ['1', 200],
    ['100', 200],
    ['101', 400],
    ['0', 400],
    ['-1', 400],
    ['abc', 400],
    ['1.5', 400],
    ['', 400],
    ['1e1', 400],
    [' 5', 400],
  ])('limit=%j -> %i', async (limit, status) => {
    const res = await call('GET', `/contracts?limit=${encodeURIComponent(limit)}`);
    expect(res.status).toBe(status);
    if (status === 200) {
      expect((res.json as ListBody).data.pagination.limit).toBe(Number(limit));
    } else {
      const error = (res.json as ErrorBody).error;
      expect(error.code).toBe('invalid_request');
      expect(error.message).toBe('limit must be an integer between 1 and 100');
      expect(error.details).toEqual([{ param: 'limit', message: 'limit must be an integer between 1 and 100' }]);
    }
  });

  it.each([['-1'], ['abc'], ['1.5'], ['']])('offset=%j is a 400 naming offset', async (offset) => {
    const res = await call('GET', `/contracts?offset=${offset}`);
    expect(res.status).toBe(400);
    expect((res.json as ErrorBody).error.details[0]!.param).toBe('offset');
  });

  it('echoes the offset, counts the total, and returns an empty page past the end', async () => {
    const total = visibleIds('bob').length;
    const page = (await call('GET', `/contracts?limit=3&offset=2`, { key: keys.bob })).json as ListBody;
    expect(page.data.pagination).toMatchObject({ limit: 3, offset: 2, total, has_more: true, next_cursor: expect.any(String) });
    expect(page.data.contracts.map((c) => c.id)).toEqual(visibleIds('bob').slice(2, 5));
    const past = (await call('GET', `/contracts?offset=${total + 10}`, { key: keys.bob })).json as ListBody;
    expect(past.data).toEqual({ contracts: [], pagination: { limit: 50, offset: total + 10, total, total_exact: true, next_cursor: null, has_more: false } });
  });

  it('keeps a stable order across pages when many contracts share created_at', async () => {
    const [owner] = await handle.db.insert(users).values({ email: 'ties@example.com' }).returning();
    const sameInstant = new Date('2026-05-05T05:05:05.000Z');
    await handle.db.insert(contracts).values(
      Array.from({ length: 37 }, (_, i) => ({ ownerId: owner!.id, title: `Tie ${i}`, fileName: 'f.pdf', fileSize: i, createdAt: sameInstant })),
    );
    const { key } = await newApiKey(handle.db, owner!.id, { name: 'ties' });
    const seen: string[] = [];
    for (let offset = 0; offset < 37; offset += 5) {
      seen.push(...((await call('GET', `/contracts?limit=5&offset=${offset}`, { key })).json as ListBody).data.contracts.map((c) => c.id));
    }
    expect(seen).toHaveLength(37);
    expect(new Set(seen).size).toBe(37);
    expect(seen).toEqual([...seen].sort().reverse()); // ties broken by id, descending
  });

  it('filters by status and by organisation; 403 for an organisation the caller is not in', async () => {
    const completed = (await call('GET', '/contracts?status=completed&limit=100', { key: keys.bob })).json as ListBody;
    expect(completed.data.contracts.length).toBeGreaterThan(0);
    expect(completed.data.contracts.every((c) => c.status === 'completed')).toBe(true);
    const acme = (await call('GET', `/contracts?organization_id=${DEMO_ORGS.acme.id}&limit=100`, { key: keys.bob })).json as ListBody;
    expect(acme.data.contracts.every((c) => c.organization_id === DEMO_ORGS.acme.id)).toBe(true);
    expect(acme.data.pagination.total).toBe(demoContractRows().filter((c) => c.organizationId === DEMO_ORGS.acme.id).length);

    const forbidden = await call('GET', `/contracts?organization_id=${DEMO_ORGS.globex.id}`, { key: keys.alice });
    expect(forbidden.status).toBe(403);
    expect((forbidden.json as ErrorBody).error.code).toBe('forbidden');
    // An organisation that does not exist is not a member either: the same 403, no existence leak.
    const unknown = await call('GET', `/contracts?organization_id=00000000-0000-4000-8000-000000000000`, { key: keys.carol });
    expect(unknown.status).toBe(403);
  });

  it('accepts organisation ids in upper case like any UUID', async () => {
    const upper = DEMO_ORGS.acme.id.toUpperCase();
    const res = await call('GET', `/contracts?organization_id=${upper}`, { key: keys.alice });
    expect(res.status).toBe(200);
    expect((res.json as ListBody).data.contracts.every((c) => c.organization_id === DEMO_ORGS.acme.id)).toBe(true);
    const exported = await call('POST', '/contracts/export', { key: keys.alice, body: JSON.stringify({ organization_id: upper }) });
    expect(exported.status).toBe(200);
  });

  it.each([
    ['status=archived', 'status', 'status must be one of: pending, processing, completed, failed'],
    ['organization_id=not-a-uuid', 'organization_id', undefined],
    ['limit=10&limit=20', 'limit', 'limit must be given only once'],
    ['status=completed&status=pending', 'status', 'status must be given only once'],
  ])('%s is a 400 naming %s', async (query, param, message) => {
    const res = await call('GET', `/contracts?${query}`);
    expect(res.status).toBe(400);
    const error = (res.json as ErrorBody).error;
    expect(error.details.map((d) => d.param)).toContain(param);
    if (message) expect(error.message).toBe(message);
  });

  it('refuses unknown query parameters, naming them (tests/api/conventions.test.ts has the details)', async () => {
    const res = await call('GET', '/contracts?utm_source=x&_=123');
    expect(res.status).toBe(400);
    expect((res.json as ErrorBody).error.details.map((d) => d.param)).toEqual(['utm_source', '_']);
  });
});

describe('GET /api/v1/contracts/{id}', () => {
  it('returns every summary field plus the extracted data', async () => {
    const row = demoContractRows().find((c) => c.title === 'Salesforce Enterprise Subscription')!;
    const res = await call('GET', `/contracts/${row.id}`, { key: keys.bob });
    expect(res.status).toBe(200);
    expect(res.json).toEqual({
      success: true,
      data: {
        contract: {
          id: row.id,
          title: row.title,
          status: 'completed',
          file_name: row.fileName,
          file_size: row.fileSize,
          created_at: row.createdAt!.toISOString(),
          updated_at: row.updatedAt!.toISOString(),
          organization_id: DEMO_ORGS.acme.id,
          data: {
            expiration_date: '2027-06-30',
            renewal_date: '2027-04-01',
            notice_period: 'P90D',
            renewal_term: 'P1Y',
            // Computed on today's UTC date (the rule's own tests: tests/contracts/renewal-dates.test.ts).
            ...(() => {
              const decision = renewalDecision({ renewalDate: '2027-04-01', autoRenewal: true, renewalTerm: 'P1Y', noticePeriod: 'P90D' }, utcToday());
              return { next_renewal_date: decision.nextRenewalDate, notice_deadline: decision.noticeDeadline };
            })(),
            auto_renewal: true,
            contract_value: 148500,
            currency: 'USD',
            parties: { provider: 'Salesforce, Inc.', client: 'Acme Corp' },
            summary: row.summary,
            confidence_score: 0.98,
          },
        },
      },
    });
  });

  it('has data null until completed, and null fields where extraction found nothing', async () => {
    const pending = demoContractRows().find((c) => c.status === 'pending' && c.ownerId === DEMO_USERS.bob.id && !c.organizationId)!;
    expect(((await call('GET', `/contracts/${pending.id}`, { key: keys.bob })).json as { data: { contract: { data: unknown } } }).data.contract.data).toBeNull();
    const sparse = demoContractRows().find((c) => c.title === 'Consulting Side Project')!;
    const data = ((await call('GET', `/contracts/${sparse.id}`, { key: keys.bob })).json as { data: { contract: { data: Record<string, unknown> } } }).data.contract.data;
    expect(data).toMatchObject({ expiration_date: null, contract_value: null, currency: null, parties: { provider: 'Bob Brennan', client: null } });
  });

  it("answers another tenant's contract exactly like one that does not exist", async () => {
    const globex = demoContractRows().find((c) => c.organizationId === DEMO_ORGS.globex.id)!;
    const other = await call('GET', `/contracts/${globex.id}`, { key: keys.alice });
    const missing = await call('GET', `/contracts/00000000-0000-4000-8000-000000000000`, { key: keys.alice });
    expect(other.status).toBe(404);
    expect(missing.status).toBe(404);
    const strip = (r: ApiResponse) => ({ ...(r.json as object), request_id: undefined });
    expect(strip(other)).toEqual(strip(missing));
    expect((other.json as ErrorBody).error.code).toBe('not_found');
  });

  it('is a 400 for an id that is not a UUID', async () => {
    const res = await call('GET', '/contracts/12345');
    expect(res.status).toBe(400);
    expect((res.json as ErrorBody).error.details[0]!.param).toBe('id');
  });
});

describe('authentication', () => {
  it('gives the same 401 for missing, malformed, unknown, expired and revoked keys', async () => {
    const { key: revoked, id } = await newApiKey(handle.db, DEMO_USERS.alice.id, { name: 'revoked' });
    await revokeApiKey(handle.db, DEMO_USERS.alice.id, id);
    const expiredKey = await newApiKey(handle.db, DEMO_USERS.alice.id, { name: 'expired', now: new Date(Date.now() - 8 * 86_400_000) });
    const unknown = 'cdapi_' + 'a'.repeat(32);
    const bodies = [];
    const mistyped = keys.alice!.slice(0, -1) + (keys.alice!.endsWith('Z') ? 'Y' : 'Z');
    for (const key of [null, '', 'garbage', mistyped, unknown, revoked, expiredKey.key]) {
      const res = await call('GET', '/contracts', { key });
      expect(res.status).toBe(401);
      expect(res.headers.get('x-ratelimit-limit')).toBeNull();
      bodies.push({ ...(res.json as object), request_id: undefined });
      expect(res.text).not.toContain(key || 'no-key');
    }
    expect(new Set(bodies.map((b) => JSON.stringify(b))).size).toBe(1);
    expect(bodies[0]).toMatchObject({ success: false, error: { code: 'unauthorized' } });
  });

  it('sends rate-limit headers on authenticated responses', async () => {
    const res = await call('GET', '/contracts?limit=1');
    expect(res.headers.get('x-ratelimit-limit')).toBe('100000');
    expect(Number(res.headers.get('x-ratelimit-reset'))).toBeGreaterThan(Date.now() / 1000);
  });
});

describe('unknown paths and methods', () => {
  it.each([
    ['GET', '/nope', 404],
    ['GET', '/contracts/a/b', 404],
    ['DELETE', '/contracts', 405],
    ['POST', '/contracts', 405],
    ['PUT', `/contracts/${DEMO_USERS.alice.id}`, 405],
    ['GET', '/contracts/export', 405],
  ])('%s %s -> %i JSON', async (method, path, status) => {
    const res = await call(method, path);
    expect(res.status).toBe(status);
    expect((res.json as ErrorBody).error.code).toBe(status === 404 ? 'not_found' : 'method_not_allowed');
    if (status === 405) expect(res.headers.get('allow')).toBe(path === '/contracts/export' ? 'POST' : 'GET, HEAD');
  });
});

describe('GET /api/v1/openapi.json', () => {
  it('serves the document to anyone, with a request id', async () => {
    const res = await handleApiRequest(new Request(`${BASE}/api/v1/openapi.json`));
    expect(res.status).toBe(200);
    expect(res.headers.get('x-request-id')).toMatch(/^req_[0-9a-f]{32}$/);
    const doc = (await res.json()) as { openapi: string; paths: Record<string, unknown> };
    expect(doc.openapi).toBe('3.1.0');
    expect(Object.keys(doc.paths)).toContain('/contracts/export');
  });

  it.each(['POST', 'PUT', 'DELETE'])('%s -> the API\'s JSON 405', async (method) => {
    const res = await handleApiRequest(new Request(`${BASE}/api/v1/openapi.json`, { method }));
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('GET, HEAD');
    const body = (await res.json()) as ErrorBody & { request_id: string };
    expect(body.error.code).toBe('method_not_allowed');
    expect(body.request_id).toBe(res.headers.get('x-request-id'));
  });
});

describe('POST /api/v1/contracts/export', () => {
  const parse = (text: string) => Papa.parse<string[]>(text, { skipEmptyLines: false }).data;

  it('streams RFC 4180 CSV of every visible contract in list order, with the documented headers', async () => {
    const res = await call('POST', '/contracts/export', { key: keys.bob });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(res.headers.get('content-disposition')).toMatch(/^attachment; filename="contracts-\d{4}-\d{2}-\d{2}\.csv"$/);
    expect(res.text.endsWith('\r\n')).toBe(true);
    const rows = parse(res.text.slice(0, -2));
    expect(rows[0]).toEqual([...EXPORT_COLUMNS]);
    expect(rows.slice(1).map((r) => r[0])).toEqual(visibleIds('bob'));
  });

  it('quotes commas, quotes and newlines, neutralises formulas, leaves numbers alone, writes null as empty', async () => {
    const rows = parse((await call('POST', '/contracts/export', { key: keys.alice })).text.trimEnd());
    const col = (name: (typeof EXPORT_COLUMNS)[number]) => EXPORT_COLUMNS.indexOf(name);
    const byTitle = (start: string) => rows.find((r) => r[col('title')]!.startsWith(start))!;
    const formula = byTitle("'=HYPERLINK");
    expect(formula[col('title')]).toBe(`'=HYPERLINK("http://evil.example","Click")`);
    expect(formula[col('provider')]).toBe("'@Provider Ltd");
    expect(formula[col('client')]).toBe("'+Client, Inc.");
    expect(formula[col('summary')]).toBe("'-Summary that starts with a minus sign.");
    expect(formula[col('contract_value')]).toBe('950.5');
    const lease = byTitle('Apartment Lease');
    expect(lease[col('title')]).toBe('Apartment Lease, "Rue de Rivoli"');
    expect(lease[col('summary')]).toBe('Unfurnished lease, three years.\nNotice period: three months.');
    expect(lease[col('renewal_date')]).toBe('2028-06-01');
    const pending = rows.find((r) => r[col('status')] === 'pending')!;
    expect(pending[col('expiration_date')]).toBe('');
    expect(pending[col('auto_renewal')]).toBe('');
  });

  it('has as many rows as the list total for the same filters', async () => {
    for (const [body, query] of [
      ['{"status":"completed"}', 'status=completed'],
      [`{"organization_id":"${DEMO_ORGS.acme.id}"}`, `organization_id=${DEMO_ORGS.acme.id}`],
      ['{}', ''],
      ['', ''],
    ]) {
      const total = ((await call('GET', `/contracts?${query}`, { key: keys.bob })).json as ListBody).data.pagination.total;
      const csv = (await call('POST', '/contracts/export', { key: keys.bob, body, headers: { 'content-type': 'application/json' } })).text;
      expect(parse(csv.trimEnd()).length - 1).toBe(total);
    }
  });

  it('neutralises formula-like text that spans several lines', async () => {
    const [owner] = await handle.db.insert(users).values({ email: 'formula@example.com' }).returning();
    await handle.db.insert(contracts).values({
      ownerId: owner!.id,
      title: '=1+1\nsecond line',
      fileName: '@cmd\r\n.pdf',
      fileSize: 1,
      status: 'completed',
      summary: '-2\n+3',
    });
    const { key } = await newApiKey(handle.db, owner!.id, { name: 'formula' });
    const [, row] = parse((await call('POST', '/contracts/export', { key })).text.trimEnd());
    const col = (name: (typeof EXPORT_COLUMNS)[number]) => row![EXPORT_COLUMNS.indexOf(name)];
    expect(col('title')).toBe("'=1+1\nsecond line");
    expect(col('file_name')).toBe("'@cmd\r\n.pdf");
    expect(col('summary')).toBe("'-2\n+3");
  });

  it('neutralises formulas behind leading spaces, tabs and line breaks', async () => {
    const [owner] = await handle.db.insert(users).values({ email: 'formula-blanks@example.com' }).returning();
    await handle.db.insert(contracts).values({
      ownerId: owner!.id,
      title: '  =HYPERLINK("http://evil.example","Click")',
      fileName: '\n\n@SUM(A1).pdf',
      fileSize: 1,
      status: 'completed',
      summary: ' \t+cmd|calc',
      provider: '\r\n-2+3',
      client: 'Client - with a dash',
    });
    const { key } = await newApiKey(handle.db, owner!.id, { name: 'formula blanks' });
    const [, row] = parse((await call('POST', '/contracts/export', { key })).text.trimEnd());
    const col = (name: (typeof EXPORT_COLUMNS)[number]) => row![EXPORT_COLUMNS.indexOf(name)];
    expect(col('title')).toBe(`'  =HYPERLINK("http://evil.example","Click")`);
    expect(col('file_name')).toBe("'\n\n@SUM(A1).pdf");
    expect(col('summary')).toBe("' \t+cmd|calc");
    expect(col('provider')).toBe("'\r\n-2+3");
    expect(col('client')).toBe('Client - with a dash');
  });

  it('exports only the header row when nothing matches', async () => {
    const res = await call('POST', '/contracts/export', { key: keys.carol, body: '{"status":"failed"}' });
    expect(res.text).toBe(`${EXPORT_COLUMNS.join(',')}\r\n`);
  });

  it.each([
    ['{"status":', 'body'],
    ['[1,2]', 'body'],
    ['"text"', 'body'],
    ['null', 'body'],
    ['{"status":"archived"}', 'status'],
    ['{"status":7}', 'status'],
    ['{"organization_id":"nope"}', 'organization_id'],
    ['{"limit":5}', 'limit'],
  ])('body %s is a 400 naming %s', async (body, param) => {
    const res = await call('POST', '/contracts/export', { body, headers: { 'content-type': 'application/json' } });
    expect(res.status).toBe(400);
    expect((res.json as ErrorBody).error.code).toBe('invalid_request');
    expect((res.json as ErrorBody).error.details.map((d) => d.param)).toContain(param);
  });

  it('refuses an oversized body with a 400, and another organisation with a 403', async () => {
    const big = JSON.stringify({ status: 'completed', pad: 'x'.repeat(20_000) });
    const res = await call('POST', '/contracts/export', { body: big });
    expect(res.status).toBe(400);
    expect((res.json as ErrorBody).error.details[0]!.param).toBe('body');
    const forbidden = await call('POST', '/contracts/export', { key: keys.carol, body: `{"organization_id":"${DEMO_ORGS.acme.id}"}` });
    expect(forbidden.status).toBe(403);
  });

  it('needs a valid key', async () => {
    expect((await call('POST', '/contracts/export', { key: null })).status).toBe(401);
  });
});

describe('HEAD', () => {
  it('answers like GET without a body', async () => {
    const head = handleApiRequest;
    const res = await head(new Request(`${BASE}/api/v1/contracts?limit=1`, { method: 'HEAD', headers: { 'X-API-Key': keys.alice!, 'X-Real-IP': CLIENT_ADDRESS } }));
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(await res.text()).toBe('');
    const unauthorized = await head(new Request(`${BASE}/api/v1/contracts`, { method: 'HEAD', headers: { 'X-Real-IP': CLIENT_ADDRESS } }));
    expect(unauthorized.status).toBe(401);
  });
});
