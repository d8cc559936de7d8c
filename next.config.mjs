/** @type {import('next').NextConfig} */
const nextConfig = {
  // PGlite ships WASM and data files that must be loaded from node_modules at run time,
  // and postgres.js/ioredis are plain Node libraries: keep them out of the bundle.
  serverExternalPackages: ['@electric-sql/pglite', 'postgres', 'ioredis'],
  poweredByHeader: false,
  reactStrictMode: true,
  typedRoutes: false,
};

export default nextConfig;
