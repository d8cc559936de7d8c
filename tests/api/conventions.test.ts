import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '@/db/client';
import { contracts } from '@/db/schema';
import { DEMO_USERS, demoContractId, seedDemo } from '@/db/seed/demo';
import { setProcessDatabase } from '@/server/database';
import { buildOpenApiDocument } from '@/server/rest/openapi-document';
import { apiRequest, BASE, PROXY_CLIENT_ADDRESS, send, V1, type Answer, type ErrorJson } from '../helpers/api';
import { applyConfig, configureForFile } from '../helpers/config';
import { createTestDatabase } from '../helpers/db';
import { createResponseValidator } from '../helpers/openapi-validator';
import { newApiKey, newFeedToken } from '../helpers/tokens';

/**
 * The API's conventions that a client builds on (issue 16): the key as X-API-Key or as
 * Authorization: Bearer, with WWW-Authenticate on every 401; unknown query parameters
 * refused by name; ETag and If-None-Match (304 without a body, not counted against the
 * key's limit). Every answer is also checked against the OpenAPI document.
 */

configureForFile({ ...PROXY_CLIENT_ADDRESS, RATE_LIMIT_AUTH_FAILURES_PER_MINUTE: '100000', RATE_LIMIT_GENERAL_PER_WINDOW: '100000' });

let handle: DatabaseHandle;
let key: string;
let feed: string;
let validate: Awaited<ReturnType<typeof createResponseValidator>>;
const aliceContract = demoContractId('alice-1');

beforeAll(async () => {
  handle = await createTestDatabase();
  setProcessDatabase(handle);
  await seedDemo(handle.db);
  key = (await newApiKey(handle.db, DEMO_USERS.alice.id)).key;
  feed = (await newFeedToken(handle.db, DEMO_USERS.alice.id)).token;
  validate = await createResponseValidator(buildOpenApiDocument(BASE));
});
afterAll(async () => handle?.close());

/** One request, checked against the document. `key: null` sends no X-API-Key. */
async function call(method: string, pathAndQuery: string, options: { key?: string | null; body?: string; headers?: Record<string, string> } = {}): Promise<Answer> {
  const answer = await send(apiRequest(method, pathAndQuery, { ...options, key: options.key === null ? null : (options.key ?? key) }));
  validate(method, new URL(`${BASE}${V1}${pathAndQuery}`).pathname.slice(V1.length), answer);
  return answer;
}
const errorOf = (answer: Answer) => (answer.json as ErrorJson).error;

describe('Authorization: Bearer', () => {
  it('is accepted like X-API-Key on the list, get-one and the export, in any case of the scheme', async () => {
    for (const scheme of ['Bearer', 'bearer', 'BEARER']) {
      const list = await call('GET', '/contracts', { key: null, headers: { Authorization: `${scheme} ${key}` } });
      expect(list.status, scheme).toBe(200);
      expect((list.json as { data: { contracts: unknown[] } }).data.contracts.length).toBeGreaterThan(0);
    }
    expect((await call('GET', `/contracts/${aliceContract}`, { key: null, headers: { Authorization: `Bearer ${key}` } })).status).toBe(200);
    const csv = await call('POST', '/contracts/export', { key: null, headers: { Authorization: `Bearer ${key}` } });
    expect(csv.status).toBe(200);
    expect(csv.text.split('\r\n')[0]).toMatch(/^id,title,status/);
  });

  it('counts against the same limit as the same key in X-API-Key', async () => {
    const own = (await newApiKey(handle.db, DEMO_USERS.alice.id, { name: 'shared limit' })).key;
    const first = await call('GET', '/contracts?limit=1', { key: own });
    const second = await call('GET', '/contracts?limit=1', { key: null, headers: { Authorization: `Bearer ${own}` } });
    expect(Number(second.headers.get('x-ratelimit-remaining'))).toBe(Number(first.headers.get('x-ratelimit-remaining')) - 1);
  });

  it('answers a bad bearer key with the very 401 of a bad X-API-Key, and both carry WWW-Authenticate', async () => {
    const wrong = `${key.slice(0, -8)}AAAAAAAA`;
    const viaHeader = await call('GET', '/contracts', { key: wrong });
    const viaBearer = await call('GET', '/contracts', { key: null, headers: { Authorization: `Bearer ${wrong}` } });
    const empty = await call('GET', '/contracts', { key: null, headers: { Authorization: 'Bearer' } });
    for (const answer of [viaHeader, viaBearer, empty]) {
      expect(answer.status).toBe(401);
      expect(errorOf(answer)).toEqual(errorOf(viaHeader));
      expect(answer.headers.get('www-authenticate')).toBe('Bearer realm="Contract Data API", ApiKey realm="Contract Data API", header="X-API-Key"');
    }
    expect(errorOf(viaHeader).message).toContain('Authorization: Bearer');
  });

  it('sends the same challenge when no key was sent, on every operation that takes a key', async () => {
    for (const [method, path] of [
      ['GET', '/contracts'],
      ['GET', `/contracts/${aliceContract}`],
      ['HEAD', '/contracts'],
      ['POST', '/contracts/export'],
    ] as const) {
      const answer = await call(method, path, { key: null });
      expect(answer.status, `${method} ${path}`).toBe(401);
      expect(answer.headers.get('www-authenticate'), `${method} ${path}`).toBe('Bearer realm="Contract Data API", ApiKey realm="Contract Data API", header="X-API-Key"');
    }
  });

  it('ignores other schemes (a Basic-authenticated proxy in front) and refuses two different keys', async () => {
    const basic = await call('GET', '/contracts', { headers: { Authorization: 'Basic dXNlcjpwYXNz' } });
    expect(basic.status).toBe(200);
    const basicAlone = await call('GET', '/contracts', { key: null, headers: { Authorization: 'Basic dXNlcjpwYXNz' } });
    expect(basicAlone.status).toBe(401);
    const same = await call('GET', '/contracts', { headers: { Authorization: `Bearer ${key}` } });
    expect(same.status).toBe(200);
    const other = (await newApiKey(handle.db, DEMO_USERS.bob.id)).key;
    const two = await call('GET', '/contracts', { headers: { Authorization: `Bearer ${other}` } });
    expect(two.status).toBe(400);
    expect(errorOf(two)).toMatchObject({ code: 'invalid_request', details: [{ param: 'Authorization' }] });
    expect(two.text).not.toContain(other);
    expect(two.text).not.toContain(key);
  });
});

describe('unknown query parameters', () => {
  it('are a 400 that names the parameter, suggests the one meant and lists the allowed ones (list)', async () => {
    const typo = await call('GET', '/contracts?stauts=active');
    expect(typo.status).toBe(400);
    const error = errorOf(typo);
    expect(error.code).toBe('invalid_request');
    expect(error.details).toEqual([{ param: 'stauts', message: expect.stringContaining('Unknown query parameter stauts. Did you mean status?') }]);
    expect(error.message).toContain('Allowed parameters: status, organization_id,');
    // Known parameters beside it change nothing; several unknown ones are all named.
    const two = await call('GET', '/contracts?limit=5&utm_source=mail&_=1732500000000');
    expect(two.status).toBe(400);
    expect(errorOf(two).details.map((d) => d.param)).toEqual(['utm_source', '_']);
  });

  it('are refused on get-one, which takes none, and a query parameter named like the path one is a duplicate', async () => {
    const extra = await call('GET', `/contracts/${aliceContract}?expand=data`);
    expect(extra.status).toBe(400);
    expect(errorOf(extra).details).toEqual([{ param: 'expand', message: 'Unknown query parameter expand. This endpoint takes no query parameters.' }]);
    const twice = await call('GET', `/contracts/${aliceContract}?id=${demoContractId('acme-1')}`);
    expect(twice.status).toBe(400);
    expect(errorOf(twice).details).toEqual([{ param: 'id', message: 'id must be given only once' }]);
  });

  it('are refused on the export (its filters go in the body) and on the calendar feed', async () => {
    const exported = await call('POST', '/contracts/export?status=completed');
    expect(exported.status).toBe(400);
    expect(exported.headers.get('content-type')).toMatch(/^application\/json/);
    expect(errorOf(exported).message).toBe(
      'Unknown query parameter status. The export takes its filters in the JSON request body, for example {"status": "completed"}.',
    );
    const calendar = await call('GET', `/calendar/${feed}.ics?refresh=1`, { key: null });
    expect(calendar.status).toBe(400);
    expect(errorOf(calendar).details.map((d) => d.param)).toEqual(['refresh']);
    expect(calendar.text).not.toContain(feed);
    const document = await call('GET', '/openapi.json?v=2', { key: null });
    expect(document.status).toBe(400);
  });

  it('are checked after authentication: without a key the answer is the 401', async () => {
    const answer = await call('GET', '/contracts?stauts=active', { key: null });
    expect(answer.status).toBe(401);
    expect((await call('POST', '/contracts/export?x=1', { key: null })).status).toBe(401);
  });

  it('leave the documented parameters alone', async () => {
    const ok = await call('GET', '/contracts?status=completed&limit=2&offset=0&sort=-created_at&auto_renewal=true');
    expect(ok.status).toBe(200);
  });
});

describe('ETag and If-None-Match', () => {
  it('answers a matching If-None-Match with 304, no body, the same ETag and the caching headers (get-one and list)', async () => {
    for (const path of [`/contracts/${aliceContract}`, '/contracts?limit=3&sort=title']) {
      const first = await call('GET', path);
      expect(first.status).toBe(200);
      const etag = first.headers.get('etag')!;
      expect(etag).toMatch(/^W\/"[A-Za-z0-9_-]{22}"$/);
      expect(first.headers.get('cache-control')).toBe('private, no-cache');
      expect(first.headers.get('vary')).toBe('X-API-Key, Authorization');

      const again = await call('GET', path, { headers: { 'If-None-Match': etag } });
      expect(again.status, path).toBe(304);
      expect(again.text).toBe('');
      expect(again.headers.get('etag')).toBe(etag);
      expect(again.headers.get('cache-control')).toBe('private, no-cache');
      expect(again.headers.get('vary')).toBe('X-API-Key, Authorization');
      expect(again.headers.get('content-type')).toBeNull();
      expect(again.headers.get('x-request-id')).toMatch(/^req_/);

      // Weak comparison, lists and "*" (RFC 9110 13.1.2); another tag is a full answer.
      for (const header of [etag.slice(2), `"other", ${etag}`, '*']) {
        expect((await call('GET', path, { headers: { 'If-None-Match': header } })).status, header).toBe(304);
      }
      const other = await call('GET', path, { headers: { 'If-None-Match': '"other"' } });
      expect(other.status).toBe(200);
      expect(other.text).toBe(first.text);
    }
  });

  it('gives the same representation the same ETag, and a changed one another', async () => {
    const path = `/contracts/${aliceContract}`;
    const before = await call('GET', path);
    expect((await call('GET', path)).headers.get('etag')).toBe(before.headers.get('etag'));
    await handle.db.update(contracts).set({ title: 'Renamed for the ETag test', updatedAt: new Date() }).where(eq(contracts.id, aliceContract));
    const after = await call('GET', path, { headers: { 'If-None-Match': before.headers.get('etag')! } });
    expect(after.status).toBe(200);
    expect(after.headers.get('etag')).not.toBe(before.headers.get('etag'));
    expect((after.json as { data: { contract: { title: string } } }).data.contract.title).toBe('Renamed for the ETag test');
  });

  it('sends a body of multi-byte text whole: Content-Length counts its bytes, and the ETag is the same over HEAD', async () => {
    const title = 'Vertrag über Ölförderung 契約書 🚀 İ';
    await handle.db.update(contracts).set({ title, updatedAt: new Date() }).where(eq(contracts.id, aliceContract));
    for (const path of [`/contracts/${aliceContract}`, '/contracts?limit=50']) {
      const answer = await call('GET', path);
      expect(answer.status).toBe(200);
      expect(Number(answer.headers.get('content-length')), path).toBe(Buffer.byteLength(answer.text));
      expect(answer.text, path).toContain(title);
      expect((await call('HEAD', path)).headers.get('etag'), path).toBe(answer.headers.get('etag'));
    }
  });

  it('answers HEAD with the same validators, and a conditional HEAD with 304', async () => {
    const get = await call('GET', '/contracts?limit=2');
    const head = await call('HEAD', '/contracts?limit=2');
    expect(head.status).toBe(200);
    expect(head.headers.get('etag')).toBe(get.headers.get('etag'));
    expect((await call('HEAD', '/contracts?limit=2', { headers: { 'If-None-Match': get.headers.get('etag')! } })).status).toBe(304);
  });

  it('serves the OpenAPI document with an ETag and a 304, without a key', async () => {
    const document = await call('GET', '/openapi.json', { key: null });
    const etag = document.headers.get('etag')!;
    expect(etag).toMatch(/^W\/"/);
    const again = await call('GET', '/openapi.json', { key: null, headers: { 'If-None-Match': etag } });
    expect(again.status).toBe(304);
    expect(again.text).toBe('');
    expect(again.headers.get('cache-control')).toBe(document.headers.get('cache-control'));
  });

  it('does not count a 304 against the key: at the limit, revalidations still answer, anything else is a 429', async () => {
    await applyConfig({ RATE_LIMIT_GENERAL_PER_WINDOW: '3' });
    try {
      const limited = (await newApiKey(handle.db, DEMO_USERS.alice.id, { name: 'limited' })).key;
      const path = `/contracts/${aliceContract}`;
      const first = await call('GET', path, { key: limited });
      expect(first.headers.get('x-ratelimit-remaining')).toBe('2');
      const etag = first.headers.get('etag')!;
      for (let i = 0; i < 5; i++) {
        const revalidated = await call('GET', path, { key: limited, headers: { 'If-None-Match': etag } });
        expect(revalidated.status).toBe(304);
        // Where the key stands, unchanged, as GitHub's 304s say.
        expect(revalidated.headers.get('x-ratelimit-limit')).toBe('3');
        expect(revalidated.headers.get('x-ratelimit-remaining')).toBe('2');
        expect(revalidated.headers.get('retry-after')).toBeNull();
      }
      // A conditional request whose answer changed counts like any other.
      const changed = await call('GET', path, { key: limited, headers: { 'If-None-Match': '"stale"' } });
      expect(changed.status).toBe(200);
      expect(changed.headers.get('x-ratelimit-remaining')).toBe('1');
      expect((await call('GET', '/contracts?limit=1', { key: limited })).headers.get('x-ratelimit-remaining')).toBe('0');
      const over = await call('GET', path, { key: limited, headers: { 'If-None-Match': '"stale"' } });
      expect(over.status).toBe(429);
      expect(over.headers.get('retry-after')).toMatch(/^[1-9][0-9]*$/);
      // An error answer after authentication counts too, as without If-None-Match.
      expect((await call('GET', '/contracts?limit=0', { key: limited, headers: { 'If-None-Match': '"x"' } })).status).toBe(429);
      // And still: nothing changed, nothing counted.
      expect((await call('GET', path, { key: limited, headers: { 'If-None-Match': etag } })).status).toBe(304);
    } finally {
      await applyConfig({ RATE_LIMIT_GENERAL_PER_WINDOW: '100000' });
    }
  });

  it('limits conditional requests on their own quota (they still cost a query)', async () => {
    await applyConfig({ RATE_LIMIT_CONDITIONAL_PER_WINDOW: '4' });
    try {
      const own = (await newApiKey(handle.db, DEMO_USERS.alice.id, { name: 'conditional quota' })).key;
      const path = `/contracts/${aliceContract}`;
      const etag = (await call('GET', path, { key: own })).headers.get('etag')!;
      const statuses: number[] = [];
      for (let i = 0; i < 5; i++) statuses.push((await call('GET', path, { key: own, headers: { 'If-None-Match': etag } })).status);
      expect(statuses).toEqual([304, 304, 304, 304, 429]);
      const refused = await call('GET', path, { key: own, headers: { 'If-None-Match': etag } });
      expect(errorOf(refused).message).toMatch(/^Too many conditional requests: 4 per minute/);
      expect(refused.headers.get('ratelimit-policy')).toBe('"conditional";q=4;w=60');
      // Unconditional requests are not affected.
      expect((await call('GET', path, { key: own })).status).toBe(200);
    } finally {
      await applyConfig({ RATE_LIMIT_CONDITIONAL_PER_WINDOW: undefined });
    }
  });
});
