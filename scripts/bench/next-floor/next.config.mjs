import path from 'node:path';
import { securityHeaders } from '../../../next.config.mjs';

/**
 * The Next.js floor of the benchmark (scripts/bench/next-floor/README.md): a separate
 * Next.js app of two route handlers, built and started like the app (`next build`,
 * `next start`), with the app's response headers configuration. Its code imports the
 * repository's modules, so the repository is the project root for the bundler.
 */
const root = path.resolve(import.meta.dirname, '../../..');

/** @type {import('next').NextConfig} */
const nextConfig = {
  serverExternalPackages: ['@electric-sql/pglite', 'postgres', 'ioredis'],
  poweredByHeader: false,
  distDir: process.env.NEXT_DIST_DIR || '.next',
  turbopack: { root },
  outputFileTracingRoot: root,
  // Type-checked with the rest of the repository (npm run typecheck).
  typescript: { ignoreBuildErrors: true },
  async headers() {
    return [{ source: '/:path*', headers: securityHeaders() }];
  },
};

export default nextConfig;
