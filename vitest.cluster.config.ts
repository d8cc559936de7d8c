import path from 'node:path';
import { defineConfig } from 'vitest/config';

/**
 * The tests of the local cluster (tests/cluster/): real HTTP through its balancer.
 * `npm run test:cluster` starts the cluster when none runs, runs them, then stops it.
 */
export default defineConfig({
  resolve: { alias: { '@': path.resolve(import.meta.dirname), 'server-only': path.resolve(import.meta.dirname, 'node_modules/server-only/empty.js') } },
  test: {
    include: ['tests/cluster/**/*.test.ts'],
    environment: 'node',
    testTimeout: 120_000,
    hookTimeout: 120_000,
    // One cluster: the files would compete for its instances and rate-limit windows.
    fileParallelism: false,
  },
});
