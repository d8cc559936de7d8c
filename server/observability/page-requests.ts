import { subscribe } from 'node:diagnostics_channel';
import { readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import path from 'node:path';
import { config } from '@/server/config';
import { logger } from './logger';
import { freshRequestId, trustedClientAddress, userAgentOf } from './request';

/**
 * One log line per request of a page (a GET of a page, a server action's POST), the
 * request line of the API's route handlers (./request.ts) with the fields that apply:
 * request id, method, route template, status, duration, client address, user agent.
 *
 * Pages are rendered by Next.js itself, with no handler of the app around them: the
 * proxy (proxy.ts) runs before the page and never learns its status, and
 * instrumentation.ts's onRequestError hears only of failures. So the line is written
 * from Node's own HTTP server, through its diagnostics channels
 * (`http.server.request.start`, `http.server.response.finish`), which `next start`'s
 * server publishes on for every request: the status is the one sent, the duration runs
 * to the last byte. Subscribed from instrumentation.ts in the Node.js runtime, unless
 * OBSERVABILITY=off. docs/operations.md, "Logs", says what this covers and what not.
 *
 * Only pages: /api/ and the app's other route handlers log themselves, /_next/ is
 * Next.js's static files and data. The route is the page's template from the build's
 * manifests (/contracts/[id]), never the path or its query string (a reset link's token
 * would be in one); a path no page matches is "unmatched". The answer carries the line's
 * request id in X-Request-Id.
 */

interface AppRoute {
  template: string;
  pattern: RegExp;
  /** A page (else a route handler, which logs itself). */
  page: boolean;
}
interface Started {
  requestId: string;
  route: string;
  startedAt: number;
}

const STARTED = new WeakMap<IncomingMessage, Started>();
const SUBSCRIBED = Symbol.for('contract-data-api.page-request-log');

export function logPageRequests(distDir = process.env.NEXT_DIST_DIR || '.next'): void {
  if (!config().observability) return;
  const g = globalThis as typeof globalThis & { [SUBSCRIBED]?: boolean };
  if (g[SUBSCRIBED]) return;
  g[SUBSCRIBED] = true;
  const routes = appRoutes(distDir);
  // No build's manifests here (a platform that lays the build out otherwise): no guessing.
  if (routes.length === 0) return;
  subscribe('http.server.request.start', (message) => {
    const { request, response } = message as { request: IncomingMessage; response: ServerResponse };
    const route = pageRouteOf(request.url ?? '/', routes);
    if (route === undefined) return;
    const requestId = freshRequestId();
    STARTED.set(request, { requestId, route, startedAt: performance.now() });
    if (!response.headersSent) response.setHeader('X-Request-Id', requestId);
  });
  subscribe('http.server.response.finish', (message) => {
    const { request, response } = message as { request: IncomingMessage; response: ServerResponse };
    const started = STARTED.get(request);
    if (!started) return;
    STARTED.delete(request);
    writeLine(request, response, started);
  });
}

function writeLine(request: IncomingMessage, response: ServerResponse, started: Started): void {
  const log = logger();
  if (!log.isLevelEnabled('info')) return;
  const headers = { get: (name: string) => headerValue(request.headers[name]) } as Headers;
  const length = response.getHeader('content-length');
  log.info(
    {
      request_id: started.requestId,
      trace_id: null,
      method: request.method ?? 'GET',
      route: started.route,
      status: response.statusCode,
      error_code: null,
      duration_ms: Math.round((performance.now() - started.startedAt) * 100) / 100,
      bytes: length === undefined ? null : Number(length),
      key_id: null,
      client_address: trustedClientAddress(headers),
      user_agent: userAgentOf(headers),
      ...(request.headers['next-action'] ? { server_action: true } : {}),
    },
    'request',
  );
}

const headerValue = (value: string | string[] | undefined): string | null => (value === undefined ? null : Array.isArray(value) ? value.join(', ') : value);

/**
 * The page template of `url`, "unmatched" for a path nothing serves, or undefined for a
 * request that is not a page's (/api/, /_next/, a route handler: logged elsewhere or not at all).
 */
export function pageRouteOf(url: string, routes: readonly AppRoute[]): string | undefined {
  const end = url.search(/[?#]/);
  const pathname = end === -1 ? url : url.slice(0, end);
  if (pathname.startsWith('/api/') || pathname === '/api' || pathname.startsWith('/_next/')) return undefined;
  // In Next.js's order: static routes before dynamic ones (/contracts/export, a handler, before the page /contracts/[id]).
  for (const route of routes) if (route.pattern.test(pathname)) return route.page ? route.template : undefined;
  // The app's public files (icon.svg, favicon.ico: a name with an extension at the root) are not pages either.
  if (/^\/[^/]+\.[a-z0-9]+$/i.test(pathname)) return undefined;
  return 'unmatched';
}

/** The pages and route handlers of the build, from its manifests (none without a build: `next dev` logs its own lines). */
export function appRoutes(distDir: string): AppRoute[] {
  try {
    const dir = path.resolve(process.cwd(), distDir);
    const appPaths = JSON.parse(readFileSync(path.join(dir, 'app-path-routes-manifest.json'), 'utf8')) as Record<string, string>;
    const manifest = JSON.parse(readFileSync(path.join(dir, 'routes-manifest.json'), 'utf8')) as {
      staticRoutes?: { page: string; regex: string }[];
      dynamicRoutes?: { page: string; regex: string }[];
    };
    const pages = new Map<string, boolean>();
    for (const [entry, template] of Object.entries(appPaths)) pages.set(template, entry.endsWith('/page'));
    return [...(manifest.staticRoutes ?? []), ...(manifest.dynamicRoutes ?? [])].flatMap((route) => {
      const page = pages.get(route.page);
      return page === undefined ? [] : [{ template: route.page, pattern: new RegExp(route.regex), page }];
    });
  } catch {
    return [];
  }
}
