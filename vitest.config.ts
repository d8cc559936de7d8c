import path from 'node:path';
import { configDefaults, defineConfig } from 'vitest/config';
import { ISOLATED_TEST_FILES } from './tests/isolated-files.mjs';

export default defineConfig({
  resolve: {
    alias: {
      '@': path.resolve(import.meta.dirname),
      // Marks modules that must never reach a browser bundle; Next.js enforces it at build
      // time. Tests run server code on purpose.
      'server-only': path.resolve(import.meta.dirname, 'node_modules/server-only/empty.js'),
    },
  },
  test: {
    globalSetup: ['tests/helpers/global-setup.ts'],
    // Prism's validator checks every answer of the API against the OpenAPI document.
    setupFiles: ['tests/helpers/prism-setup.ts'],
    environment: 'node',
    testTimeout: 30_000,
    hookTimeout: 120_000,
    // Two cores: more workers only contend for them.
    maxWorkers: 2,
    projects: [
      {
        extends: true,
        test: {
          name: 'shared',
          include: ['tests/**/*.test.ts'],
          // Run against a running local cluster by `npm run test:cluster` (vitest.cluster.config.ts).
          exclude: [...configDefaults.exclude, 'tests/cluster/**', ...ISOLATED_TEST_FILES],
          // On PGlite the app's modules are loaded once per worker (tests/isolated-files.mjs
          // says why and which files cannot be). Not yet on Postgres: there the process's pool
          // and caches outlive a file whose database is dropped (CI failed on it, issue 32's note).
          isolate: Boolean(process.env.DATABASE_URL),
          // And so are the worker's in-memory databases, emptied for its next file (tests/helpers/pglite-reuse.ts).
          env: { CDA_TEST_REUSE_DATABASES: '1' },
        },
      },
      { extends: true, test: { name: 'isolated', include: ISOLATED_TEST_FILES, isolate: true } },
    ],
  },
});
