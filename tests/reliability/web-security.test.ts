import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { DEMO_USERS } from '@/db/seed/demo';
import { CHILD_TIMEOUT_MS, childDatabaseEnv } from '../helpers/db';
import { isSameOriginRequest } from '@/server/http/same-origin';
import { handleAppTrpcRequest } from '@/server/trpc/app-handler';
import type { Scenario } from './support/session-cookie';
import { createDemoWorld, type DemoWorld } from './support/world';

/**
 * What protects the web pages: security headers on every response, the internal tRPC
 * endpoint refusing cross-site mutations (CSRF), and the session cookie's attributes.
 * The headers are also checked on the running production build by `npm run soak`.
 */

// next-auth signs with AUTH_SECRET; without it, development would write one under .data/.
process.env.AUTH_SECRET ??= 'test-secret-that-is-at-least-32-characters-long';

// The signed-in user of the app's tRPC endpoint (next-auth itself cannot load in vitest;
// the session cookie is tested in a separate process below).
const session = vi.hoisted(() => ({ user: undefined as { id: string; email: string; name: string | null } | undefined }));
vi.mock('@/server/auth/session', () => ({ currentUser: async () => session.user }));

/** The environment without a database or Redis: the child process uses its own in-memory database. */
function withoutDatabase(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const { DATABASE_URL: _d, REDIS_URL: _r, ...rest } = env;
  return rest;
}

interface HeaderRule {
  source: string;
  headers: { key: string; value: string }[];
}
interface NextConfigModule {
  default: { headers(): Promise<HeaderRule[]> };
  securityHeaders(nodeEnv?: string): { key: string; value: string }[];
}

let world: DemoWorld;
beforeAll(async () => {
  world = await createDemoWorld();
});
afterAll(async () => world?.handle.close());

async function headersFor(nodeEnv: string): Promise<Record<string, string>> {
  // A variable specifier: next.config.mjs is plain JavaScript, outside the type-checked code.
  const file = pathToFileURL(path.resolve('next.config.mjs')).href;
  const config = (await import(file)) as NextConfigModule;
  const saved = process.env.NODE_ENV;
  (process.env as Record<string, string>).NODE_ENV = nodeEnv;
  try {
    const rules = await config.default.headers();
    const all = rules.find((r) => r.source === '/:path*');
    expect(all, 'one rule covers every path').toBeDefined();
    return Object.fromEntries(all!.headers.map((h) => [h.key.toLowerCase(), h.value]));
  } finally {
    (process.env as Record<string, string | undefined>).NODE_ENV = saved;
  }
}

function directives(csp: string): Map<string, string[]> {
  return new Map(
    csp
      .split(';')
      .map((d) => d.trim().split(/\s+/))
      .filter((parts) => parts[0])
      .map(([name, ...values]) => [name!, values]),
  );
}

describe('security headers (next.config.mjs, every path)', () => {
  it('in production: CSP, nosniff, no framing, referrer policy, HSTS', async () => {
    const h = await headersFor('production');
    expect(h['x-content-type-options']).toBe('nosniff');
    expect(h['x-frame-options']).toBe('DENY');
    expect(h['referrer-policy']).toBe('strict-origin-when-cross-origin');
    expect(h['strict-transport-security']).toMatch(/^max-age=(\d+); includeSubDomains$/);
    expect(Number(/max-age=(\d+)/.exec(h['strict-transport-security']!)![1])).toBeGreaterThanOrEqual(31_536_000);

    const csp = directives(h['content-security-policy']!);
    expect(csp.get('default-src')).toEqual(["'self'"]);
    expect(csp.get('frame-ancestors')).toEqual(["'none'"]);
    expect(csp.get('object-src')).toEqual(["'none'"]);
    expect(csp.get('base-uri')).toEqual(["'self'"]);
    // Inline scripts are Next.js's hydration; nothing is loaded from elsewhere and nothing is eval'd.
    expect(csp.get('script-src')).toEqual(["'self'", "'unsafe-inline'"]);
    expect(csp.get('connect-src')).toEqual(["'self'"]);
    for (const [name, values] of csp) {
      expect(values.filter((v) => v === '*' || v === 'http:' || v === 'https:'), name).toEqual([]);
    }
  });

  it('in development: the same, plus what hot reload needs, and no HSTS (http://localhost must keep working)', async () => {
    const h = await headersFor('development');
    expect(h['strict-transport-security']).toBeUndefined();
    expect(h['x-frame-options']).toBe('DENY');
    const csp = directives(h['content-security-policy']!);
    expect(csp.get('script-src')).toContain("'unsafe-eval'");
    expect(csp.get('frame-ancestors')).toEqual(["'none'"]);
  });
});

describe('the internal tRPC endpoint refuses cross-site mutations', () => {
  // The victim is signed in: a forged request would carry their cookie.
  beforeAll(() => {
    session.user = { id: DEMO_USERS.alice.id, email: DEMO_USERS.alice.email, name: DEMO_USERS.alice.name };
  });
  afterAll(() => {
    session.user = undefined;
  });

  const mutation = (headers: Record<string, string>) =>
    new Request('http://localhost:3000/api/trpc/apiKeys.create', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Host: 'localhost:3000', ...headers },
      body: JSON.stringify({ name: 'forged?', expiresInDays: 7 }),
    });
  const keyCount = async () => (await world.handle.query<{ n: number }>("SELECT count(*)::int AS n FROM access_tokens WHERE kind = 'api_key'"))[0]!.n;

  it.each([
    ['Origin of another site', { Origin: 'https://evil.example' }],
    ['Origin that only starts like this one', { Origin: 'http://localhost:3000.evil.example' }],
    ['Origin null (sandboxed frame, data: URL)', { Origin: 'null' }],
    ['Sec-Fetch-Site: cross-site', { 'Sec-Fetch-Site': 'cross-site' }],
    ['Sec-Fetch-Site: same-site (a sibling subdomain)', { 'Sec-Fetch-Site': 'same-site' }],
    ['same Origin but Sec-Fetch-Site: cross-site', { Origin: 'http://localhost:3000', 'Sec-Fetch-Site': 'cross-site' }],
  ])('%s -> 403, and no key is created', async (_name, headers) => {
    const before = await keyCount();
    const res = await handleAppTrpcRequest(mutation(headers));
    expect(res.status).toBe(403);
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(await res.json()).toMatchObject({ success: false, error: { code: 'forbidden', message: 'Cross-site request refused.' }, request_id: res.headers.get('x-request-id') });
    expect(await keyCount()).toBe(before);
  });

  it.each([
    ['same Origin', { Origin: 'http://localhost:3000' }],
    ['Sec-Fetch-Site: same-origin', { 'Sec-Fetch-Site': 'same-origin', Origin: 'http://localhost:3000' }],
    ['Sec-Fetch-Site: none (typed in the address bar)', { 'Sec-Fetch-Site': 'none' }],
    ['no browser headers (a script, which still needs the session cookie)', {}],
  ])('%s: served', async (_name, headers) => {
    expect(isSameOriginRequest(mutation(headers))).toBe(true);
    const before = await keyCount();
    const res = await handleAppTrpcRequest(mutation(headers));
    expect(res.status, await res.clone().text()).toBe(200);
    expect(await keyCount()).toBe(before + 1);
  });

  it('a mutation over GET (what a cross-site link or image could do) runs nothing', async () => {
    const before = await keyCount();
    const input = encodeURIComponent(JSON.stringify({ name: 'via GET', expiresInDays: 7 }));
    const res = await handleAppTrpcRequest(
      new Request(`http://localhost:3000/api/trpc/apiKeys.create?input=${input}`, { headers: { 'Sec-Fetch-Site': 'cross-site' } }),
    );
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(await keyCount()).toBe(before);
  });
});

describe('the internal tRPC endpoint serves only the app\'s own procedures', () => {
  beforeAll(() => {
    session.user = { id: DEMO_USERS.alice.id, email: DEMO_USERS.alice.email, name: DEMO_USERS.alice.name };
  });
  afterAll(() => {
    session.user = undefined;
  });

  it.each(['contracts.list', 'contracts.get'])('%s is not reachable with a session instead of an API key', async (procedure) => {
    const input = encodeURIComponent(JSON.stringify({ id: DEMO_USERS.alice.id }));
    const res = await handleAppTrpcRequest(new Request(`http://localhost:3000/api/trpc/${procedure}?input=${input}`));
    expect(res.status).toBe(404);
    expect(await res.text()).not.toContain('"contracts"');
  });

  it('still serves the key management the settings page uses', async () => {
    const res = await handleAppTrpcRequest(new Request('http://localhost:3000/api/trpc/apiKeys.list'));
    expect(res.status).toBe(200);
  });
});

describe('the session cookie (next-auth, signed in with a password)', () => {
  const scenarios: Scenario[] = [
    { base: 'https://contracts.example.com' },
    // Behind a proxy that terminates TLS, with the public URL configured.
    { base: 'http://contracts.internal:3000', authUrl: 'https://contracts.example.com' },
    { base: 'http://localhost:3000' },
  ];
  let cookies: string[][];

  beforeAll(() => {
    const run = spawnSync(process.execPath, ['--import', './tests/helpers/server-only-hook.mjs', '--import', 'tsx', 'tests/reliability/support/session-cookie.ts', JSON.stringify(scenarios)], {
      encoding: 'utf8',
      timeout: CHILD_TIMEOUT_MS,
      env: { ...withoutDatabase(process.env), ...childDatabaseEnv(), NODE_ENV: 'production', AUTH_SECRET: process.env.AUTH_SECRET },
    });
    expect(run.status, run.stderr).toBe(0);
    const results = JSON.parse(run.stdout.trim().split('\n').at(-1)!) as { status: number; session: string | null }[];
    cookies = results.map((r) => {
      expect(r.session, `no session cookie (status ${r.status})`).not.toBeNull();
      return r.session!.split(';').map((part) => part.trim());
    });
  }, CHILD_TIMEOUT_MS + 5_000);

  it('over HTTPS: __Secure- prefix, Secure, HttpOnly, SameSite=Lax, whole site', () => {
    const attributes = cookies[0]!;
    expect(attributes[0]).toMatch(/^__Secure-authjs\.session-token=.+/);
    expect(attributes).toContain('Secure');
    expect(attributes).toContain('HttpOnly');
    expect(attributes).toContain('SameSite=Lax');
    expect(attributes).toContain('Path=/');
  });

  it('behind a TLS-terminating proxy, with AUTH_URL=https://…: Secure as well', () => {
    expect(cookies[1]![0]).toMatch(/^__Secure-authjs\.session-token=/);
    expect(cookies[1]).toContain('Secure');
    expect(cookies[1]).toContain('HttpOnly');
  });

  it('over plain HTTP (a development server on localhost): HttpOnly and SameSite=Lax, not Secure', () => {
    const attributes = cookies[2]!;
    expect(attributes[0]).toMatch(/^authjs\.session-token=.+/);
    expect(attributes).toContain('HttpOnly');
    expect(attributes).toContain('SameSite=Lax');
    expect(attributes).not.toContain('Secure');
  });
});
