import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { SCALAR_PACKAGE_DIR, scalarBundle, scalarBundleResponse, ZOD_EVAL_PROBE } from '@/server/docs/scalar-bundle';

/** The API reference's bundle as the app serves it (server/docs/scalar-bundle.ts). */

const pinned = (JSON.parse(readFileSync(path.resolve(import.meta.dirname, '..', '..', 'package.json'), 'utf8')) as {
  dependencies: Record<string, string>;
}).dependencies['@scalar/api-reference'];

describe('the Scalar bundle', () => {
  it('is the pinned version, changed only where the eval probe was', () => {
    const bundle = scalarBundle();
    expect(bundle.version).toBe(pinned);
    expect(bundle.fileName).toBe(`scalar-api-reference-${pinned}.js`);
    const original = readFileSync(path.join(SCALAR_PACKAGE_DIR, 'dist', 'browser', 'standalone.js'), 'utf8');
    const served = bundle.body.toString('utf8');
    expect(served).not.toContain(ZOD_EVAL_PROBE);
    expect(served).not.toMatch(/new Function\(/);
    const at = original.indexOf(ZOD_EVAL_PROBE);
    expect(served.slice(0, at)).toBe(original.slice(0, at));
    expect(served.slice(at, at + 'return!1'.length)).toBe('return!1');
    expect(served.slice(at + 'return!1'.length)).toBe(original.slice(at + ZOD_EVAL_PROBE.length));
  });

  it('is served under its versioned name only, with a validator for revalidation', async () => {
    const { fileName, etag, body } = scalarBundle();
    const url = `http://app.test/docs/api/assets/${fileName}`;
    const ok = scalarBundleResponse(fileName, new Request(url));
    expect(ok.status).toBe(200);
    expect(ok.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(ok.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(Buffer.from(await ok.arrayBuffer()).equals(body)).toBe(true);

    const head = scalarBundleResponse(fileName, new Request(url, { method: 'HEAD' }));
    expect(head.status).toBe(200);
    expect(head.headers.get('content-length')).toBe(String(body.byteLength));

    const cached = scalarBundleResponse(fileName, new Request(url, { headers: { 'If-None-Match': etag } }));
    expect(cached.status).toBe(304);
    expect(await cached.text()).toBe('');

    for (const other of ['scalar-api-reference-0.0.1.js', 'standalone.js', '..%2F..%2Fpackage.json']) {
      expect(scalarBundleResponse(other, new Request(`http://app.test/docs/api/assets/${other}`)).status).toBe(404);
    }
  });
});
