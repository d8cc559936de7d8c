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
 *
 * Mail: with E2E_MAILBOX set (playwright.config.ts) and neither SMTP_URL nor
 * MAIL_TRANSPORT=log given, a real SMTP server runs in this process and the app sends to
 * it (SMTP_URL, MAIL_FROM, and AUTH_URL on this server's address: production refuses to
 * start without a way to send mail, and e-mail links use AUTH_URL's origin only); every
 * message lands in E2E_MAILBOX for the specs (e2e/support/mailbox.ts).
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import type { TestSmtpServer } from '../tests/helpers/smtp-server';
import { startMailbox } from './support/mailbox';
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

let smtp: TestSmtpServer | undefined;
if (env.E2E_MAILBOX && !env.SMTP_URL && env.MAIL_TRANSPORT !== 'log') {
  smtp = await startMailbox(env.E2E_MAILBOX);
  env.SMTP_URL = smtp.url;
  env.MAIL_FROM = 'Contract Data API <no-reply@e2e.example>';
  env.MAIL_TRANSPORT = 'smtp';
  env.AUTH_URL ??= `http://127.0.0.1:${port}`;
  console.log(`[e2e web server] SMTP server on ${smtp.url}, mailbox ${env.E2E_MAILBOX}`);
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
  void (smtp?.close() ?? Promise.resolve()).finally(() => process.exit(code ?? (signal ? 0 : 1)));
});
