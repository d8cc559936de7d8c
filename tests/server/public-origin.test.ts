import { describe, expect, it } from 'vitest';
import { parseConfig } from '@/server/config';
import { publicOriginOf } from '@/server/http/public-origin';
import { serveDocument } from '@/server/rest/document';
import { applyConfig, restoreConfig } from '../helpers/config';

/**
 * Host header injection (issue 17): the origin of every absolute URL the app writes.
 * With AUTH_URL it is fixed; otherwise X-Forwarded-Host counts only behind a trusted
 * proxy, and the answer is marked as taken from the request (never publicly cacheable).
 */
const at = (env: Record<string, string | undefined>, headers: Record<string, string>) => publicOriginOf(new Headers(headers), parseConfig(env));
const EVIL = { host: 'app.example', 'x-forwarded-host': 'evil.example', 'x-forwarded-proto': 'https' };

describe('publicOriginOf', () => {
  it('with AUTH_URL: its origin, whatever the headers say', () => {
    for (const env of [{}, { TRUSTED_PROXY_HOPS: '1' }, { VERCEL: '1', DATABASE_URL: 'postgres://u@db/app', REDIS_URL: 'redis://r' }]) {
      expect(at({ ...env, AUTH_URL: 'https://contracts.example.com/some/path' }, EVIL)).toEqual({ origin: 'https://contracts.example.com', fromRequest: false });
      expect(at({ ...env, AUTH_URL: 'https://contracts.example.com' }, { host: 'evil.example' })).toEqual({ origin: 'https://contracts.example.com', fromRequest: false });
    }
  });

  it('without a trusted proxy: X-Forwarded-Host is the client\'s word and does not count; Host does', () => {
    expect(at({}, EVIL)).toEqual({ origin: 'https://app.example', fromRequest: true });
    expect(at({ TRUSTED_PROXY_HOPS: '0' }, EVIL).origin).toBe('https://app.example');
    expect(at({}, { host: 'localhost:3000', 'x-forwarded-proto': 'http' }).origin).toBe('http://localhost:3000');
  });

  it('behind TRUSTED_PROXY_HOPS proxies: the host the outermost trusted proxy forwarded', () => {
    expect(at({ TRUSTED_PROXY_HOPS: '1' }, { host: 'internal:3000', 'x-forwarded-host': 'contracts.example.com', 'x-forwarded-proto': 'https' })).toEqual({
      origin: 'https://contracts.example.com',
      fromRequest: true,
    });
    // A client-written entry before the proxy's own does not count.
    expect(at({ TRUSTED_PROXY_HOPS: '1' }, { host: 'internal', 'x-forwarded-host': 'evil.example, contracts.example.com', 'x-forwarded-proto': 'https' }).origin).toBe(
      'https://contracts.example.com',
    );
    expect(at({ TRUSTED_PROXY_HOPS: '2' }, { host: 'internal', 'x-forwarded-host': 'evil.example, contracts.example.com, lb.internal' }).origin).toBe(
      'https://contracts.example.com',
    );
  });

  it('on Vercel (its edge overwrites X-Forwarded-Host): the forwarded host', () => {
    const vercel = { VERCEL: '1', DATABASE_URL: 'postgres://u@db/app', REDIS_URL: 'redis://r' };
    expect(at(vercel, { host: 'x.vercel.app', 'x-forwarded-host': 'contracts.example.com', 'x-forwarded-proto': 'https' }).origin).toBe('https://contracts.example.com');
  });

  it('AUTH_URL must be an http(s) URL', () => {
    expect(() => parseConfig({ AUTH_URL: 'contracts.example.com' })).toThrow(/AUTH_URL must be a URL/);
  });
});

describe('GET /api/v1/openapi.json (its server URL and whether a shared cache may keep it)', () => {
  const documentFor = async (env: Record<string, string | undefined>, headers: Record<string, string>) => {
    await applyConfig(env);
    try {
      const res = await serveDocument(new Request('http://localhost:3000/api/v1/openapi.json', { headers }), new Headers());
      const doc = (await res.json()) as { servers: { url: string }[] };
      return { servers: doc.servers.map((s) => s.url), cacheControl: res.headers.get('cache-control'), text: JSON.stringify(doc) };
    } finally {
      await restoreConfig();
    }
  };

  it('X-Forwarded-Host from a client without a trusted proxy writes nothing, and the answer is private', async () => {
    const doc = await documentFor({ AUTH_URL: undefined, TRUSTED_PROXY_HOPS: undefined, CLIENT_ADDRESS_HEADER: undefined, VERCEL: undefined }, EVIL);
    expect(doc.text).not.toContain('evil.example');
    expect(doc.servers[0]).toMatch(/^https:\/\/app\.example\//);
    expect(doc.cacheControl).toBe('private, max-age=300');
  });

  it('with AUTH_URL: that origin everywhere in the document (code samples too), publicly cacheable', async () => {
    const doc = await documentFor({ AUTH_URL: 'https://contracts.example.com', TRUSTED_PROXY_HOPS: '1' }, EVIL);
    expect(doc.text).not.toContain('evil.example');
    expect(doc.text).not.toContain('app.example');
    expect(doc.servers[0]).toMatch(/^https:\/\/contracts\.example\.com\//);
    expect(doc.cacheControl).toBe('public, max-age=300');
  });
});
