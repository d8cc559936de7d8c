/**
 * The end-to-end suite's web server: `webServer.command` in playwright.config.ts.
 *
 * Playwright starts `webServer` BEFORE `globalSetup` (1.64: plugin setup tasks run
 * first), so the database is prepared here, before `next start` opens it:
 *
 * - DATABASE_URL set (CI: a fresh Postgres database): `npm run db:migrate`, then
 *   `npm run db:seed -- --reset` (every row deleted, then the demo data).
 * - DATABASE_URL unset: a new PGlite directory under the system temp dir (never
 *   .data/pglite), seeded the same way (PGlite migrates on open). PGlite allows one
 *   process per directory, so the seed process has exited before the server starts.
 *   The directory is deleted when the server stops.
 *
 * Then it serves the production build (`npm run build` must have run: .next/BUILD_ID)
 * on 127.0.0.1:E2E_PORT and relays SIGTERM/SIGINT to it.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');
const port = process.env.E2E_PORT ?? '3210';

function fail(message: string): never {
  console.error(`[e2e web server] ${message}`);
  process.exit(1);
}

if (!existsSync(path.join(root, '.next', 'BUILD_ID'))) {
  fail('no production build in .next/: run `npm run build` before `npm run test:e2e`.');
}

let tempDir: string | undefined;
const env: NodeJS.ProcessEnv = { ...process.env };
if (!env.DATABASE_URL) {
  tempDir = mkdtempSync(path.join(os.tmpdir(), 'cda-e2e-pglite-'));
  env.PGLITE_DIR = tempDir;
}

function cleanUp() {
  if (tempDir) rmSync(tempDir, { recursive: true, force: true });
  tempDir = undefined;
}

function npmRun(args: string[]) {
  const result = spawnSync('npm', ['run', '--silent', ...args], { cwd: root, env, stdio: 'inherit' });
  if (result.status !== 0) {
    cleanUp();
    fail(`\`npm run ${args.join(' ')}\` failed (exit ${result.status ?? result.signal}).`);
  }
}

const started = Date.now();
if (env.DATABASE_URL) npmRun(['db:migrate']);
npmRun(['db:seed', '--', '--reset']);
console.log(
  `[e2e web server] database ready (${env.DATABASE_URL ? 'Postgres' : `PGlite in ${tempDir}`}) in ${Date.now() - started} ms`,
);

const server = spawn(
  process.execPath,
  [path.join(root, 'node_modules', 'next', 'dist', 'bin', 'next'), 'start', '--hostname', '127.0.0.1', '--port', port],
  { cwd: root, env, stdio: 'inherit' },
);

for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.on(signal, () => {
    if (server.exitCode === null && server.signalCode === null) server.kill(signal);
  });
}

server.on('exit', (code, signal) => {
  cleanUp();
  process.exit(code ?? (signal ? 0 : 1));
});
