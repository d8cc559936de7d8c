import Papa from 'papaparse';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { DatabaseHandle } from '@/db/client';
import { setProcessDatabase } from '@/server/database';
import { contracts, memberships, organizations, users, type NewContract } from '@/db/schema';
import { toSort } from '@/server/contracts/query';
import { contractsInPages } from '@/server/contracts/service';
import { EXPORT_COLUMNS } from '@/server/contracts/shape';
import { buildOpenApiDocument } from '@/server/rest/openapi-document';
import { handleApiRequest } from '@/server/rest/router';
import { configureForFile } from '../helpers/config';
import { createTestDatabase } from '../helpers/db';
import { createResponseValidator, type ApiResponse } from '../helpers/openapi-validator';
import { newApiKey } from '../helpers/tokens';

/**
 * The renewal filters, sorts and export options against a small hand-made dataset whose
 * answers are worked out by hand below, with "today" fixed at 2027-01-10 (UTC).
 */

configureForFile({ RATE_LIMIT_GENERAL_PER_WINDOW: '100000', RATE_LIMIT_EXPORT_PER_WINDOW: '100000' });

const BASE = 'http://localhost:3000';
const TODAY = '2027-01-10';
const USER = '00000000-0000-4000-8000-00000000d001';
const OTHER = '00000000-0000-4000-8000-00000000d002';
const ORG = '00000000-0000-4000-8000-00000000d0a1';
const id = (n: number) => `00000000-0000-4000-8000-0000000c00${String(n).padStart(2, '0')}`;

const base = { fileName: 'f.pdf', fileSize: 1, summary: null, confidenceScore: 0.9, currency: null, contractValue: null, provider: null, client: null };
const at = (day: number) => new Date(Date.UTC(2026, 10, day, 12));
// c1..c6 are the caller's; c7 belongs to another user and must never appear.
const ROWS: NewContract[] = [
  { ...base, id: id(1), ownerId: USER, title: 'Alpha Hosting', status: 'completed', createdAt: at(1), updatedAt: at(20),
    expirationDate: '2027-01-10', renewalDate: '2026-12-10', autoRenewal: true, contractValue: 100, currency: 'USD', provider: 'Northwind Traders', client: 'Acme' },
  { ...base, id: id(2), ownerId: USER, title: 'beta lease', status: 'completed', createdAt: at(2), updatedAt: at(5),
    expirationDate: '2027-02-09', renewalDate: '2027-01-20', autoRenewal: false, contractValue: 5000, currency: 'EUR' },
  { ...base, id: id(3), ownerId: USER, title: 'Gamma support', status: 'completed', createdAt: at(3), updatedAt: at(6),
    expirationDate: '2027-02-10', renewalDate: null, autoRenewal: null },
  // Pending: its raw dates and parties are not extracted data yet, so no date, auto-renewal or party filter matches it.
  { ...base, id: id(4), ownerId: USER, title: 'Delta pending', status: 'pending', createdAt: at(4), updatedAt: at(21),
    expirationDate: '2027-01-15', renewalDate: '2027-01-12', autoRenewal: true, contractValue: 1, currency: 'USD', provider: 'Northwind Traders' },
  { ...base, id: id(5), ownerId: OTHER, organizationId: ORG, title: 'Epsilon 100% deal_x', status: 'completed', createdAt: at(5), updatedAt: at(7),
    expirationDate: '2026-12-31', renewalDate: '2027-01-11', autoRenewal: true, contractValue: 250, currency: 'GBP', client: "O'Brien\\Co" },
  { ...base, id: id(6), ownerId: OTHER, organizationId: ORG, title: 'zeta', status: 'completed', createdAt: at(6), updatedAt: at(8),
    expirationDate: null, renewalDate: '2027-03-01', autoRenewal: false, contractValue: 75, currency: 'USD' },
  { ...base, id: id(7), ownerId: OTHER, title: 'Alpha of someone else', status: 'completed', createdAt: at(7), updatedAt: at(22),
    expirationDate: '2027-01-11', renewalDate: '2027-01-11', autoRenewal: true, provider: 'Northwind Traders' },
];

let handle: DatabaseHandle;
let key: string;
let validate: Awaited<ReturnType<typeof createResponseValidator>>;

beforeAll(async () => {
  handle = await createTestDatabase();
  setProcessDatabase(handle);
  await handle.db.insert(users).values([
    { id: USER, email: 'dana@example.com', name: 'Dana' },
    { id: OTHER, email: 'eve@example.com', name: 'Eve' },
  ]);
  await handle.db.insert(organizations).values({ id: ORG, name: 'Renewals Org' });
  await handle.db.insert(memberships).values([
    { userId: USER, organizationId: ORG },
    { userId: OTHER, organizationId: ORG },
  ]);
  await handle.db.insert(contracts).values(ROWS);
  key = (await newApiKey(handle.db, USER, { name: 'filters', expiresInDays: null })).key;
  validate = await createResponseValidator(buildOpenApiDocument(BASE));
  // "Today" for the relative windows; only Date is faked, timers stay real.
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(new Date(`${TODAY}T15:30:00Z`));
});
afterAll(async () => {
  vi.useRealTimers();
  await handle?.close();
});

async function call(method: string, pathAndQuery: string, body?: string): Promise<ApiResponse> {
  const req = new Request(`${BASE}/api/v1${pathAndQuery}`, { method, headers: { 'X-API-Key': key }, body });
  const path = new URL(req.url).pathname;
  const res = await handleApiRequest(req);
  const text = await res.text();
  const json = res.headers.get('content-type')?.startsWith('application/json') ? JSON.parse(text) : undefined;
  const response = { status: res.status, headers: res.headers, text, json };
  validate(method, path.slice('/api/v1'.length), response);
  return response;
}

type ListBody = { data: { contracts: { id: string }[]; pagination: { total: number } } };

/** The ids (as c1..c6) of a list request, and its total. */
async function listed(query: string): Promise<{ ids: string[]; total: number }> {
  const res = await call('GET', `/contracts?limit=100&${query}`);
  expect(res.status, res.text).toBe(200);
  const body = res.json as ListBody;
  return { ids: body.data.contracts.map((c) => `c${Number(c.id.slice(-2))}`), total: body.data.pagination.total };
}

describe('filters (today is 2027-01-10)', () => {
  it.each([
    // [query, expected in the default order (newest created first)]
    ['', ['c6', 'c5', 'c4', 'c3', 'c2', 'c1']],
    // [2027-01-10, 2027-02-09]: c1 expires today, c2 on the 30th day; c3 on the 31st; c4 is pending.
    ['expiring_within_days=30', ['c2', 'c1']],
    ['expiring_within_days=31', ['c3', 'c2', 'c1']],
    ['expiring_within_days=0', ['c1']],
    // Renewals in [2027-01-10, 2027-02-09]: c2 (01-20), c5 (01-11); c1 renewed in December; c4 pending.
    ['renewing_within_days=30', ['c5', 'c2']],
    // Exclusive bounds.
    ['expires_before=2027-02-10', ['c5', 'c2', 'c1']],
    ['expires_after=2027-01-10', ['c3', 'c2']],
    ['expires_after=2027-01-10&expires_before=2027-02-10', ['c2']],
    ['expires_after=2027-02-10', []],
    ['renews_after=2027-01-11&renews_before=2027-03-01', ['c2']],
    ['renews_after=2027-01-10', ['c6', 'c5', 'c2']],
    // A window and a bound together: both apply.
    ['expiring_within_days=365&expires_after=2027-01-31', ['c3', 'c2']],
    ['auto_renewal=true', ['c5', 'c1']],
    ['auto_renewal=false', ['c6', 'c2']],
    // Title, provider and client, case-insensitively; a pending contract's parties are not searched.
    ['q=northwind', ['c1']],
    ['q=ALPHA', ['c1']],
    ['q=a', ['c6', 'c5', 'c4', 'c3', 'c2', 'c1']],
    // LIKE's wildcards are literal text.
    [`q=${encodeURIComponent('100%')}`, ['c5']],
    ['q=deal_x', ['c5']],
    ['q=beta_lease', []],
    [`q=${encodeURIComponent("o'brien\\co")}`, ['c5']],
    ['q=acme', ['c1']],
    // Updated at or after the instant (c1 was updated exactly then).
    [`updated_since=${encodeURIComponent('2026-11-20T12:00:00Z')}`, ['c4', 'c1']],
    [`updated_since=${encodeURIComponent('2026-11-20T13:00:00+01:00')}`, ['c4', 'c1']],
    [`updated_since=${encodeURIComponent('2026-11-20T12:00:00.001Z')}`, ['c4']],
    // Combined with status and organisation.
    ['status=pending&q=delta', ['c4']],
    [`organization_id=${ORG}&auto_renewal=true`, ['c5']],
    ['status=pending&expiring_within_days=30', []],
    // The ends of the calendar: nothing is after the last day or before the first.
    ['expires_after=9999-12-31', []],
    ['renews_before=0001-01-01', []],
    ['expiring_within_days=3650&expires_before=9999-12-31', ['c3', 'c2', 'c1']],
    [`updated_since=${encodeURIComponent('0001-01-01T00:00:00+01:00')}`, ['c6', 'c5', 'c4', 'c3', 'c2', 'c1']],
    // 1 µs after c1's update, written in another offset: Postgres keeps microseconds.
    [`updated_since=${encodeURIComponent('2026-11-21T03:00:00.000001+15:00')}`, ['c4']],
  ])('%s', async (query, expected) => {
    const { ids, total } = await listed(query);
    expect(ids).toEqual(expected);
    expect(total).toBe(expected.length);
  });
});

describe('sort', () => {
  it.each([
    ['created_at', ['c1', 'c2', 'c3', 'c4', 'c5', 'c6']],
    ['-created_at', ['c6', 'c5', 'c4', 'c3', 'c2', 'c1']],
    ['updated_at', ['c2', 'c3', 'c5', 'c6', 'c1', 'c4']],
    ['-updated_at', ['c4', 'c1', 'c6', 'c5', 'c3', 'c2']],
    // Nulls last in both directions (c4 pending shows no date, c6 has none), ties by id in the same direction.
    ['expiration_date', ['c5', 'c1', 'c2', 'c3', 'c4', 'c6']],
    ['-expiration_date', ['c3', 'c2', 'c1', 'c5', 'c6', 'c4']],
    ['renewal_date', ['c1', 'c5', 'c2', 'c6', 'c3', 'c4']],
    ['-renewal_date', ['c6', 'c2', 'c5', 'c1', 'c4', 'c3']],
    ['contract_value', ['c6', 'c1', 'c5', 'c2', 'c3', 'c4']],
    ['-contract_value', ['c2', 'c5', 'c1', 'c6', 'c4', 'c3']],
    // Case-insensitive.
    ['title', ['c1', 'c2', 'c4', 'c5', 'c3', 'c6']],
    ['-title', ['c6', 'c3', 'c5', 'c4', 'c2', 'c1']],
  ])('sort=%s', async (sort, expected) => {
    expect((await listed(`sort=${sort}`)).ids).toEqual(expected);
  });

  it('offset pages follow the same order, across the contracts without a key', async () => {
    for (const sort of ['expiration_date', '-expiration_date', 'contract_value', '-renewal_date']) {
      const all = (await listed(`sort=${sort}`)).ids;
      const paged: string[] = [];
      for (let offset = 0; offset < all.length; offset += 4) {
        const res = await call('GET', `/contracts?sort=${sort}&limit=4&offset=${offset}`);
        paged.push(...(res.json as ListBody).data.contracts.map((c) => `c${Number(c.id.slice(-2))}`));
      }
      expect(paged).toEqual(all);
    }
  });

  it.each(['expiration_date', '-expiration_date', 'renewal_date', '-contract_value', 'title', '-updated_at'])(
    'keyset pages (as the export reads them) follow sort=%s exactly, across null keys',
    async (sort) => {
      const all = (await listed(`sort=${sort}`)).ids;
      const scope = { userId: USER, organizationIds: [ORG] };
      const paged: string[] = [];
      for await (const page of contractsInPages(handle.db, scope, {}, 2, toSort(sort as never))) {
        paged.push(...page.map((c) => `c${Number(c.id.slice(-2))}`));
      }
      expect(paged).toEqual(all);
    },
  );
});

describe('invalid values: 400 naming the parameter', () => {
  it.each([
    ['expiring_within_days=-1', 'expiring_within_days'],
    ['expiring_within_days=3651', 'expiring_within_days'],
    ['renewing_within_days=abc', 'renewing_within_days'],
    ['renewing_within_days=1.5', 'renewing_within_days'],
    ['expires_before=2027-02-30', 'expires_before'],
    ['expires_after=10/01/2027', 'expires_after'],
    ['renews_before=', 'renews_before'],
    ['renews_after=2027-1-1', 'renews_after'],
    ['auto_renewal=yes', 'auto_renewal'],
    ['auto_renewal=1', 'auto_renewal'],
    ['auto_renewal=FALSE', 'auto_renewal'],
    ['q=', 'q'],
    [`q=${'x'.repeat(201)}`, 'q'],
    [`q=${encodeURIComponent('a\nb')}`, 'q'],
    ['updated_since=2026-11-20', 'updated_since'],
    ['updated_since=0000-06-01T00:00:00Z', 'updated_since'],
    // Offsets beyond Postgres's ±15:59 and endless fractions are refused, not a 500.
    [`updated_since=${encodeURIComponent('2026-01-01T00:00:00+16:00')}`, 'updated_since'],
    [`updated_since=${encodeURIComponent('2026-01-01T00:00:00-23:59')}`, 'updated_since'],
    [`updated_since=2026-01-01T00:00:00.${'9'.repeat(5000)}Z`, 'updated_since'],
    ['expires_before=0000-01-01', 'expires_before'],
    ['updated_since=2026-11-20T12:00:00', 'updated_since'],
    ['sort=price', 'sort'],
    ['sort=--title', 'sort'],
    ['sort=title&sort=-title', 'sort'],
  ])('%s', async (query, param) => {
    const res = await call('GET', `/contracts?${query}`);
    expect(res.status).toBe(400);
    const error = (res.json as { error: { code: string; message: string; details: { param?: string }[] } }).error;
    expect(error.code).toBe('invalid_request');
    expect(error.details.map((d) => d.param)).toContain(param);
    expect(error.message).toContain(param);
  });
});

describe('export with filters, sort, columns and bom', () => {
  const rowsOf = (text: string) => Papa.parse<string[]>(text.replace(/^\uFEFF/, ''), { skipEmptyLines: true }).data;

  it('exports the same contracts in the same order as the list for the same filters and sort', async () => {
    const body = { renewing_within_days: 60, auto_renewal: false, sort: '-renewal_date' };
    const res = await call('POST', '/contracts/export', JSON.stringify(body));
    expect(res.status).toBe(200);
    const [header, ...rows] = rowsOf(res.text);
    expect(header).toEqual([...EXPORT_COLUMNS]);
    const list = await listed('renewing_within_days=60&auto_renewal=false&sort=-renewal_date');
    expect(rows.map((r) => `c${Number(r[0]!.slice(-2))}`)).toEqual(list.ids);
    expect(list.ids).toEqual(['c6', 'c2']);
  });

  it('writes only the chosen columns, in the chosen order', async () => {
    const res = await call('POST', '/contracts/export', JSON.stringify({ columns: ['renewal_date', 'title', 'id'], sort: 'renewal_date', renewing_within_days: 365 }));
    expect(res.status).toBe(200);
    expect(rowsOf(res.text)).toEqual([
      ['renewal_date', 'title', 'id'],
      ['2027-01-11', 'Epsilon 100% deal_x', id(5)],
      ['2027-01-20', 'beta lease', id(2)],
      ['2027-03-01', 'zeta', id(6)],
    ]);
  });

  it('writes an empty cell of a one-column export as "", so that no row is an empty line', async () => {
    const res = await call('POST', '/contracts/export', JSON.stringify({ columns: ['organization_id'], sort: 'created_at' }));
    expect(res.status).toBe(200);
    // c1..c4 are personal (no organisation), c5 and c6 are the organisation's.
    expect(res.text).toBe(`organization_id\r\n""\r\n""\r\n""\r\n""\r\n${ORG}\r\n${ORG}\r\n`);
    const lines = res.text.split('\r\n');
    expect(lines.pop()).toBe('');
    expect(lines.filter((line) => line === '')).toEqual([]);
  });

  it('starts with a UTF-8 byte order mark only when bom is true', async () => {
    const withBom = await handleApiRequest(
      new Request(`${BASE}/api/v1/contracts/export`, { method: 'POST', headers: { 'X-API-Key': key }, body: '{"bom": true, "q": "beta"}' }),
    );
    const bytes = new Uint8Array(await withBom.arrayBuffer());
    expect([...bytes.slice(0, 5)]).toEqual([0xef, 0xbb, 0xbf, 0x69, 0x64]); // BOM, then "id"
    const without = await handleApiRequest(
      new Request(`${BASE}/api/v1/contracts/export`, { method: 'POST', headers: { 'X-API-Key': key }, body: '{"bom": false, "q": "beta"}' }),
    );
    expect([...new Uint8Array(await without.arrayBuffer()).slice(0, 2)]).toEqual([0x69, 0x64]);
  });

  it.each([
    [{ columns: [] }, 'columns'],
    [{ columns: ['id', 'id'] }, 'columns'],
    [{ columns: ['id', 'secret'] }, 'columns.1'],
    [{ columns: 'id,title' }, 'columns'],
    [{ bom: 'true' }, 'bom'],
    [{ auto_renewal: 'false' }, 'auto_renewal'],
    [{ expiring_within_days: '30' }, 'expiring_within_days'],
    [{ expiring_within_days: 3651 }, 'expiring_within_days'],
    [{ expires_before: '2027-02-30' }, 'expires_before'],
    [{ sort: 'value' }, 'sort'],
    [{ updated_since: 'yesterday' }, 'updated_since'],
    [{ q: '' }, 'q'],
  ])('%j -> 400 naming %s', async (body, param) => {
    const res = await call('POST', '/contracts/export', JSON.stringify(body));
    expect(res.status).toBe(400);
    expect((res.json as { error: { details: { param?: string }[] } }).error.details.map((d) => d.param)).toContain(param);
  });
});

describe('the total of a text search', () => {
  it('is exact up to 1,000 matches; beyond, 1000 with total_exact false (and every other total exact)', async () => {
    const needles = (from: number, n: number): NewContract[] =>
      Array.from({ length: n }, (_, i) => ({
        ...base, id: `00000000-0000-4000-8000-0000000e${String(from + i).padStart(4, '0')}`, ownerId: USER,
        title: 'Haystack needle', status: 'pending', createdAt: at(1), updatedAt: at(1),
      }));
    type Totals = { data: { contracts: unknown[]; pagination: { total: number; total_exact: boolean; has_more: boolean } } };
    const pagination = async (query: string) => {
      const res = await call('GET', `/contracts?${query}`);
      expect(res.status, res.text).toBe(200);
      return (res.json as Totals).data.pagination;
    };
    try {
      await handle.db.insert(contracts).values(needles(0, 1000));
      expect(await pagination('q=needle&limit=5')).toMatchObject({ total: 1000, total_exact: true, has_more: true });
      await handle.db.insert(contracts).values(needles(1000, 1));
      expect(await pagination('q=needle&limit=5')).toMatchObject({ total: 1000, total_exact: false, has_more: true });
      // Without q, the 1,002 pending contracts (the needles and c4) are counted exactly.
      expect(await pagination('status=pending&limit=5')).toMatchObject({ total: 1002, total_exact: true });
    } finally {
      await handle.db.delete(contracts).where(sql`${contracts.title} = 'Haystack needle'`);
    }
  });
});
