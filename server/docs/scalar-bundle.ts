import 'server-only';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';

/**
 * The API reference's renderer, Scalar's standalone browser bundle, served by the app
 * itself (no CDN): read from the pinned npm package, patched as described below, and
 * served under a versioned name so that browsers may keep it for a year.
 *
 * next.config.mjs lists the file in outputFileTracingIncludes so that deployments that
 * trace files (Vercel, `output: 'standalone'`) carry it.
 */

export const SCALAR_PACKAGE_DIR = path.join(process.cwd(), 'node_modules', '@scalar', 'api-reference');
const BUNDLE_PATH = path.join(SCALAR_PACKAGE_DIR, 'dist', 'browser', 'standalone.js');

/**
 * The bundle embeds zod 4, which probes once whether `new Function` is allowed (to compile
 * faster parsers). Under the app's Content-Security-Policy (no 'unsafe-eval') the probe
 * throws and is caught, but the browser still reports it as a CSP violation. Newer zod
 * skips the probe when `jitless` is set; this bundle's zod has no reachable setting, so
 * the probe is replaced by its answer under this policy: "not allowed". zod then uses
 * its interpreted parsers, with the same results.
 */
export const ZOD_EVAL_PROBE = 'try{return new Function(""),!0}catch(e){return!1}';
const PROBE_ANSWER = 'return!1';

export interface ScalarBundle {
  version: string;
  fileName: string;
  body: Buffer;
  etag: string;
}

let cached: ScalarBundle | undefined;

function load(): ScalarBundle {
  const { version } = JSON.parse(readFileSync(path.join(SCALAR_PACKAGE_DIR, 'package.json'), 'utf8')) as { version: string };
  const source = readFileSync(BUNDLE_PATH, 'utf8');
  const probes = source.split(ZOD_EVAL_PROBE).length - 1;
  // Fails loudly after an upgrade that changes the probe, rather than serving a bundle
  // that reports CSP violations (or one patched in the wrong place).
  if (probes !== 1) {
    throw new Error(`@scalar/api-reference ${version}: expected the zod eval probe once in standalone.js, found it ${probes} times`);
  }
  const body = Buffer.from(source.replace(ZOD_EVAL_PROBE, PROBE_ANSWER), 'utf8');
  const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`;
  return { version, fileName: `scalar-api-reference-${version}.js`, body, etag };
}

/** The patched bundle, read once per process. */
export function scalarBundle(): ScalarBundle {
  cached ??= load();
  return cached;
}

/** Where the page loads the bundle from (see app/docs/api/assets/[file]/route.ts). */
export function scalarBundleUrl(): string {
  return `/docs/api/assets/${scalarBundle().fileName}`;
}

/** GET of a versioned asset: the bundle under its current name, 404 for anything else. */
export function scalarBundleResponse(fileName: string, req: Request): Response {
  const bundle = scalarBundle();
  if (fileName !== bundle.fileName) {
    return new Response('Not found', { status: 404, headers: { 'Content-Type': 'text/plain; charset=utf-8' } });
  }
  const headers = new Headers({
    'Content-Type': 'text/javascript; charset=utf-8',
    // The name changes with the version, so the content under a name never changes.
    'Cache-Control': 'public, max-age=31536000, immutable',
    ETag: bundle.etag,
  });
  if (req.headers.get('if-none-match') === bundle.etag) return new Response(null, { status: 304, headers });
  headers.set('Content-Length', String(bundle.body.byteLength));
  return new Response(req.method === 'HEAD' ? null : new Uint8Array(bundle.body), { status: 200, headers });
}
