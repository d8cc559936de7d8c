import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { appRoutes, pageRouteOf } from '@/server/observability/page-requests';

/**
 * Which requests get a page's request line, and under which template: read from the
 * manifests `next build` writes (their shape as Next.js 16 writes them, for this app's
 * routes). tests/reliability/log-secrets.test.ts checks the lines of a real production build.
 */
const dir = mkdtempSync(path.join(os.tmpdir(), 'cda-page-routes-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

writeFileSync(
  path.join(dir, 'app-path-routes-manifest.json'),
  JSON.stringify({
    '/page': '/',
    '/contracts/page': '/contracts',
    '/contracts/[id]/page': '/contracts/[id]',
    '/contracts/export/route': '/contracts/export',
    '/settings/api-keys/page': '/settings/api-keys',
    '/api/v1/[[...path]]/route': '/api/v1/[[...path]]',
    '/docs/api/assets/[file]/route': '/docs/api/assets/[file]',
    '/icon.svg/route': '/icon.svg',
  }),
);
writeFileSync(
  path.join(dir, 'routes-manifest.json'),
  JSON.stringify({
    staticRoutes: [
      { page: '/', regex: '^/(?:/)?$' },
      { page: '/contracts', regex: '^/contracts(?:/)?$' },
      { page: '/contracts/export', regex: '^/contracts/export(?:/)?$' },
      { page: '/settings/api-keys', regex: '^/settings/api\\-keys(?:/)?$' },
      { page: '/icon.svg', regex: '^/icon\\.svg(?:/)?$' },
      { page: '/_not-found', regex: '^/_not\\-found(?:/)?$' },
    ],
    dynamicRoutes: [
      { page: '/api/v1/[[...path]]', regex: '^/api/v1(?:/(.+?))?(?:/)?$' },
      { page: '/contracts/[id]', regex: '^/contracts/([^/]+?)(?:/)?$' },
      { page: '/docs/api/assets/[file]', regex: '^/docs/api/assets/([^/]+?)(?:/)?$' },
    ],
  }),
);

describe('the page request line', () => {
  const routes = appRoutes(dir);

  it('names a page by its template, never by its path or query', () => {
    expect(pageRouteOf('/', routes)).toBe('/');
    expect(pageRouteOf('/contracts?q=secret&status=active', routes)).toBe('/contracts');
    expect(pageRouteOf('/contracts/3f0e8f1e-0000-4000-8000-000000000000', routes)).toBe('/contracts/[id]');
    expect(pageRouteOf('/settings/api-keys#new', routes)).toBe('/settings/api-keys');
  });

  it('leaves out what logs itself or is not a page: /api/, the other route handlers, /_next/, files', () => {
    expect(pageRouteOf('/api/v1/contracts', routes)).toBeUndefined();
    expect(pageRouteOf('/api/health', routes)).toBeUndefined();
    expect(pageRouteOf('/api/metrics', routes)).toBeUndefined();
    // A static handler wins over the dynamic page beside it, as in Next.js.
    expect(pageRouteOf('/contracts/export?status=active', routes)).toBeUndefined();
    expect(pageRouteOf('/docs/api/assets/scalar.js', routes)).toBeUndefined();
    expect(pageRouteOf('/_next/static/chunks/app.js', routes)).toBeUndefined();
    expect(pageRouteOf('/icon.svg', routes)).toBeUndefined();
    expect(pageRouteOf('/favicon.ico', routes)).toBeUndefined();
  });

  it('calls a path nothing serves "unmatched" (a 404), whatever it holds', () => {
    expect(pageRouteOf('/no/such/page/cda_secret', routes)).toBe('unmatched');
  });

  it('knows no routes without a build (then no page line is written at all)', () => {
    expect(appRoutes(path.join(dir, 'missing'))).toEqual([]);
  });
});
