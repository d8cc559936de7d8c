/**
 * The test files that run with a module graph of their own (vitest's `isolate: true`).
 * Every other file shares its worker's modules with the files before it (`isolate: false`):
 * the app's modules are imported once per worker instead of once per file, which took 210 s
 * of a 660 s `npm test` (vitest's "import" figure).
 *
 * A file belongs here when it replaces a module of the app (`vi.mock`: a module another
 * file already imported would keep the real one, and this file's mock would leak into the
 * next) or registers something once per process (OpenTelemetry's global tracer provider).
 * eslint.config.mjs refuses `vi.mock` in any test file not listed here.
 */
export const ISOLATED_TEST_FILES = [
  // vi.mock of the REST transports: every route held past the deadline.
  'tests/server/deadline.test.ts',
  // vi.mock of the session: a signed-in caller without next-auth.
  'tests/server/body-limit.test.ts',
  'tests/reliability/web-security.test.ts',
  // vi.mock of next/server's `after`: when last_used_at is written.
  'tests/server/last-used-after.test.ts',
  // vi.mock of the deprecation registry: entries injected for the test.
  'tests/api/deprecations.test.ts',
  // vi.mock of the page query: a page read ahead that fails.
  'tests/contracts/read-ahead.test.ts',
  // Registers OpenTelemetry's global tracer provider for the process.
  'tests/observability/traces-otlp.test.ts',
  // Points the process's database at Postgres through PgBouncer: in a shared graph the
  // process database an earlier file set (a PGlite it gave back) was used instead.
  'tests/reliability/stock-pgbouncer.test.ts',
  // In a shared worker, all 100 requests came back degraded twice (an UpstashError whose
  // error is an object); cause not found yet (issue 32's note), alone it passes.
  'tests/rate-limit/upstash-store.test.ts',
];
