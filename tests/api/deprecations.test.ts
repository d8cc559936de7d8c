import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { DatabaseHandle } from '@/db/client';
import { DEMO_USERS, demoContractId, seedDemo } from '@/db/seed/demo';
import { setProcessDatabase } from '@/server/database';
import { buildOpenApiDocument } from '@/server/rest/openapi-document';
import { apiRequest, BASE, PROXY_CLIENT_ADDRESS, send, V1, type Answer } from '../helpers/api';
import { configureForFile } from '../helpers/config';
import { createTestDatabase } from '../helpers/db';
import { createResponseValidator } from '../helpers/openapi-validator';
import { newApiKey } from '../helpers/tokens';

/**
 * The deprecation machinery, with entries this file puts into the registry
 * (server/rest/deprecations.ts, empty in production): one entry there marks the document
 * (`deprecated: true`, the headers declared on the affected answers) and puts
 * `Deprecation`, `Sunset` and `Link; rel="deprecation"` on the answers that used it, and
 * on no other. Every answer is validated against the document by this file's validator
 * and by Prism (tests/helpers/prism-setup.ts), whose document has these entries too.
 */

vi.mock('@/server/rest/deprecations', () => ({
  DEPRECATIONS: [
    { kind: 'parameter', operation: 'listContracts', name: 'q', announced: '2026-12-01', sunset: '2027-12-01', changelog: 'test-q', replacement: 'Use `search`.' },
    { kind: 'parameter', operation: 'listContracts', name: 'auto_renewal', announced: '2026-11-01', sunset: '2027-12-31', changelog: 'test-auto-renewal' },
    { kind: 'parameter', operation: 'exportContracts', name: 'bom', announced: '2026-12-01', sunset: '2028-01-15', changelog: 'test-bom' },
    { kind: 'field', schema: 'ExtractedData', name: 'confidence_score', announced: '2026-12-02', sunset: '2027-12-02', changelog: 'test-confidence' },
  ],
}));

const ORIGIN = 'https://contracts.example.test';
configureForFile({ ...PROXY_CLIENT_ADDRESS, AUTH_URL: ORIGIN, RATE_LIMIT_GENERAL_PER_WINDOW: '100000', RATE_LIMIT_EXPORT_PER_WINDOW: '100000' });

type Json = Record<string, unknown>;

let handle: DatabaseHandle;
let key: string;
let validate: Awaited<ReturnType<typeof createResponseValidator>>;
const doc = buildOpenApiDocument(BASE);
const paths = doc.paths as Record<string, Record<string, Json>>;
const schemas = (doc.components as Json).schemas as Record<string, Record<string, Record<string, Json>>>;

beforeAll(async () => {
  handle = await createTestDatabase();
  setProcessDatabase(handle);
  await seedDemo(handle.db);
  key = (await newApiKey(handle.db, DEMO_USERS.alice.id)).key;
  validate = await createResponseValidator(doc);
});
afterAll(async () => handle?.close());

async function call(method: string, pathAndQuery: string, options: { body?: string; headers?: Record<string, string> } = {}): Promise<Answer> {
  const answer = await send(apiRequest(method, pathAndQuery, { ...options, key }));
  validate(method, new URL(`${BASE}${V1}${pathAndQuery}`).pathname.slice(V1.length), answer);
  return answer;
}

const at = (day: string) => `@${Date.parse(`${day}T00:00:00Z`) / 1000}`;
const link = (anchor: string) => `<${ORIGIN}/docs/changelog#${anchor}>; rel="deprecation"`;
/** The three headers, `link` keeping only the deprecation links (the list's rel="next" is its own business). */
const deprecationHeaders = (answer: Answer) => {
  const links = (answer.headers.get('link') ?? '').split(/, (?=<)/).filter((l) => l.endsWith('rel="deprecation"'));
  return { deprecation: answer.headers.get('deprecation'), sunset: answer.headers.get('sunset'), link: links.length > 0 ? links.join(', ') : null };
};
const none = { deprecation: null, sunset: null, link: null };

describe('the document', () => {
  it('marks the deprecated parameter, body field and response field, with the dates and a link to the changelog', () => {
    for (const method of ['get', 'head']) {
      const q = (paths['/contracts']![method]!.parameters as Json[]).find((p) => p.name === 'q')!;
      expect(q.deprecated, method).toBe(true);
      expect(q.description).toContain('**Deprecated** since 2026-12-01; it may be gone after 2027-12-01. Use `search`.');
      expect(q.description).toContain(`(${BASE}/docs/changelog#test-q)`);
      const limit = (paths['/contracts']![method]!.parameters as Json[]).find((p) => p.name === 'limit')!;
      expect(limit.deprecated).toBeUndefined();
    }
    expect(schemas.ExportRequest!.properties!.bom!.deprecated).toBe(true);
    expect(schemas.ExportRequest!.properties!.columns!.deprecated).toBeUndefined();
    expect(schemas.ExtractedData!.properties!.confidence_score!.deprecated).toBe(true);
    expect(String(paths['/contracts/{id}']!.get!.description)).toContain('**Deprecated**: the field `confidence_score` of ExtractedData, since 2026-12-02');
    expect(String(paths['/contracts/export']!.post!.description)).toContain('**Deprecated**: the body field `bom`, since 2026-12-01');
  });

  it('declares the three headers on every answer of the operations concerned, and on no other', () => {
    const components = (doc.components as Json).headers as Record<string, Json>;
    expect(Object.keys(components)).toEqual(expect.arrayContaining(['Deprecation', 'Sunset', 'Link']));
    expect(String(components.Link!.description)).toContain('rel="deprecation"');
    // The events' data carries the contract in the get-one shape: a deprecated field of it concerns them too.
    const concerned = ['get /contracts', 'head /contracts', 'get /contracts/{id}', 'head /contracts/{id}', 'get /events', 'head /events', 'get /events/{id}', 'head /events/{id}', 'post /contracts/export'];
    for (const [path, item] of Object.entries(paths)) {
      for (const [method, operation] of Object.entries(item)) {
        for (const [status, response] of Object.entries(operation.responses as Record<string, Json>)) {
          const headers = Object.keys((response.headers ?? {}) as Json);
          const expected = concerned.includes(`${method} ${path}`);
          for (const name of ['Deprecation', 'Sunset']) expect(headers.includes(name), `${method} ${path} ${status} ${name}`).toBe(expected);
          if (expected) expect(headers, `${method} ${path} ${status}`).toContain('Link');
        }
      }
    }
  });
});

describe('the answers', () => {
  it('carry the headers of a deprecated parameter only when the request sent it', async () => {
    const used = await call('GET', '/contracts?q=acme');
    expect(used.status).toBe(200);
    expect(deprecationHeaders(used)).toEqual({ deprecation: at('2026-12-01'), sunset: 'Wed, 01 Dec 2027 00:00:00 GMT', link: link('test-q') });
    expect(deprecationHeaders(await call('GET', '/contracts?limit=5'))).toEqual(none);
    expect(deprecationHeaders(await call('GET', '/contracts'))).toEqual(none);
  });

  it('carry them on every answer to such a request: HEAD, 304, errors, and after the next page\'s link', async () => {
    const head = await call('HEAD', '/contracts?q=a');
    expect(deprecationHeaders(head).deprecation).toBe(at('2026-12-01'));
    const first = await call('GET', '/contracts?q=a&limit=1');
    // The list's Link keeps its rel="next" first; the deprecation's follows, comma-separated.
    expect(first.headers.get('link')).toMatch(/^<https:\/\/contracts\.example\.test\/api\/v1\/contracts\?[^>]*>; rel="next", /);
    expect(first.headers.get('link')!.endsWith(`rel="next", ${link('test-q')}`)).toBe(true);
    const revalidated = await call('GET', '/contracts?q=a&limit=1', { headers: { 'If-None-Match': first.headers.get('etag')! } });
    expect(revalidated.status).toBe(304);
    expect(deprecationHeaders(revalidated).sunset).toBe('Wed, 01 Dec 2027 00:00:00 GMT');
    const refused = await call('GET', '/contracts?q=a&limit=1000');
    expect(refused.status).toBe(400);
    expect(deprecationHeaders(refused)).toEqual({ deprecation: at('2026-12-01'), sunset: 'Wed, 01 Dec 2027 00:00:00 GMT', link: link('test-q') });
  });

  it('name the earliest announcement and sunset, and link every deprecation used', async () => {
    const both = await call('GET', '/contracts?q=a&auto_renewal=true');
    expect(deprecationHeaders(both)).toEqual({
      deprecation: at('2026-11-01'),
      sunset: 'Wed, 01 Dec 2027 00:00:00 GMT',
      link: `${link('test-q')}, ${link('test-auto-renewal')}`,
    });
  });

  it('carry a deprecated field\'s headers on every answer of the operations that answer with it', async () => {
    const expected = { deprecation: at('2026-12-02'), sunset: 'Thu, 02 Dec 2027 00:00:00 GMT', link: link('test-confidence') };
    const found = await call('GET', `/contracts/${demoContractId('alice-1')}`);
    expect(found.status).toBe(200);
    expect(deprecationHeaders(found)).toEqual(expected);
    const missing = await call('GET', '/contracts/00000000-0000-4000-8000-000000000000');
    expect(missing.status).toBe(404);
    expect(deprecationHeaders(missing)).toEqual(expected);
    // The list's answers do not contain extracted data.
    expect(deprecationHeaders(await call('GET', '/contracts?limit=1'))).toEqual(none);
  });

  it('carry a deprecated export body field\'s headers only when the body had it', async () => {
    const used = await call('POST', '/contracts/export', { body: JSON.stringify({ bom: true }), headers: { 'Content-Type': 'application/json' } });
    expect(used.status).toBe(200);
    expect(deprecationHeaders(used)).toEqual({ deprecation: at('2026-12-01'), sunset: 'Sat, 15 Jan 2028 00:00:00 GMT', link: link('test-bom') });
    const refused = await call('POST', '/contracts/export', { body: JSON.stringify({ bom: true, organization_id: 'not-a-uuid' }) });
    expect(refused.status).toBe(400);
    // A body that does not parse names no field the API read: nothing to announce.
    expect(deprecationHeaders(refused)).toEqual(none);
    expect(deprecationHeaders(await call('POST', '/contracts/export', { body: JSON.stringify({ columns: ['id'] }) }))).toEqual(none);
    expect(deprecationHeaders(await call('POST', '/contracts/export'))).toEqual(none);
  });

  it('leave the answers of other operations alone', async () => {
    expect(deprecationHeaders(await call('GET', '/openapi.json'))).toEqual(none);
  });
});
