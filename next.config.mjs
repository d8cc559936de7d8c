/**
 * Security headers of every response (pages and API). docs/security.md explains each one;
 * tests/reliability/security-headers.test.ts checks them.
 *
 * - Content-Security-Policy: everything from this origin only. Next.js hydrates pages
 *   with inline scripts, so scripts need 'unsafe-inline' (a nonce would force every page
 *   to render dynamically); React escapes what it renders and the app has no
 *   dangerouslySetInnerHTML, so injected markup has nowhere to come from. Development adds
 *   'unsafe-eval' (React's dev tooling) and websockets (hot reload).
 * - Frames: none at all (X-Frame-Options for old browsers, frame-ancestors for the rest).
 * - HSTS only in production: a development server on http://localhost must stay reachable.
 *
 * @param {string | undefined} nodeEnv
 * @returns {{ key: string, value: string }[]}
 */
export function securityHeaders(nodeEnv = process.env.NODE_ENV) {
  const production = nodeEnv === 'production';
  const csp = [
    "default-src 'self'",
    `script-src 'self' 'unsafe-inline'${production ? '' : " 'unsafe-eval'"}`,
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data: blob:",
    "font-src 'self' data:",
    `connect-src 'self'${production ? '' : ' ws: wss:'}`,
    "object-src 'none'",
    "base-uri 'self'",
    // Sign-in forms post here; "Continue with GitHub" continues at github.com.
    "form-action 'self' https://github.com",
    "frame-ancestors 'none'",
  ].join('; ');
  return [
    { key: 'Content-Security-Policy', value: csp },
    { key: 'X-Content-Type-Options', value: 'nosniff' },
    { key: 'X-Frame-Options', value: 'DENY' },
    { key: 'Referrer-Policy', value: 'strict-origin-when-cross-origin' },
    { key: 'Permissions-Policy', value: 'camera=(), microphone=(), geolocation=(), payment=(), usb=()' },
    { key: 'Cross-Origin-Opener-Policy', value: 'same-origin' },
    ...(production ? [{ key: 'Strict-Transport-Security', value: 'max-age=63072000; includeSubDomains' }] : []),
  ];
}

/** @type {import('next').NextConfig} */
const nextConfig = {
  // PGlite ships WASM and data files that must be loaded from node_modules at run time,
  // and postgres.js/ioredis are plain Node libraries: keep them out of the bundle. pino
  // and pino-pretty are on Next.js's own list too; named here so that the logger
  // (server/observability/logger.ts) does not depend on that list staying as it is.
  serverExternalPackages: ['@electric-sql/pglite', 'postgres', 'ioredis', 'pino', 'pino-pretty'],
  poweredByHeader: false,
  // A separate build directory lets a benchmark or soak run build the app without
  // disturbing a developer's `.next` (NEXT_DIST_DIR=.next-bench npm run build).
  distDir: process.env.NEXT_DIST_DIR || '.next',
  reactStrictMode: true,
  // `next build` type-checks the project as `npm run typecheck` does (the same tsconfig).
  // CI runs that first and sets CDA_TYPECHECKED=1 for the builds that follow, so the same
  // check is not made again by each of them (34 s a build here); every other build (Vercel's,
  // a developer's) still checks.
  typescript: { ignoreBuildErrors: process.env.CDA_TYPECHECKED === '1' },
  typedRoutes: false,
  // Files read at run time by path, which a deployment that traces files (Vercel,
  // `output: 'standalone'`) must carry; `npm run vercel:check` checks they are there.
  // Keys match routes anywhere in their path (Next.js matches with `contains`).
  outputFileTracingIncludes: {
    // db/migrations: db/client.ts applies the SQL files from this folder by path (every open
    // of the embedded database). The tracer finds the folder through its
    // path.join(process.cwd(), ...) too, but only while the code reads it that way.
    '/api/**': ['./db/migrations/*.sql', './db/migrations/meta/_journal.json'],
    // The API reference's bundle is read from node_modules (server/docs/scalar-bundle.ts).
    '/docs/api': ['./node_modules/@scalar/api-reference/package.json'],
    '/docs/api/assets/[file]': [
      './node_modules/@scalar/api-reference/package.json',
      './node_modules/@scalar/api-reference/dist/browser/standalone.js',
    ],
  },
  // The app's forms post a few KiB; a server action with a larger body stops being read
  // at 100 KiB (proxy.ts answers a declared larger one with 413 first; docs/security.md).
  experimental: {
    serverActions: { bodySizeLimit: '100kb' },
    // proxy.ts only sees requests it refuses: it needs none of their body.
    proxyClientMaxBodySize: '1kb',
  },
  async headers() {
    return [{ source: '/:path*', headers: securityHeaders() }];
  },
};

export default nextConfig;
