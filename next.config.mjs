/** @type {import('next').NextConfig} */
const nextConfig = {
  // PGlite ships WASM and data files that must be loaded from node_modules at run time,
  // and postgres.js/ioredis are plain Node libraries: keep them out of the bundle.
  serverExternalPackages: ['@electric-sql/pglite', 'postgres', 'ioredis'],
  poweredByHeader: false,
  // A separate build directory lets a benchmark or soak run build the app without
  // disturbing a developer's `.next` (NEXT_DIST_DIR=.next-bench npm run build).
  distDir: process.env.NEXT_DIST_DIR || '.next',
  reactStrictMode: true,
  typedRoutes: false,
};

export default nextConfig;
