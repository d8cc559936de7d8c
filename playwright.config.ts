import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { defineConfig, devices } from '@playwright/test';

/**
 * Browser and HTTP suite against the PRODUCTION build: run `npm run build` first, then
 * `npm run test:e2e` (CI: .ci/run does both). The web server refuses to start without
 * .next/BUILD_ID.
 *
 * - Database: DATABASE_URL (and REDIS_URL) pass through when set, as in CI; without it
 *   the server uses a throw-away PGlite directory. e2e/web-server.ts migrates and seeds
 *   it (`npm run db:seed -- --reset`) before `next start`, because Playwright starts
 *   `webServer` before `globalSetup`.
 * - API keys are minted through the app's session-authenticated tRPC endpoint (see
 *   e2e/support/session.ts), which works with PGlite too (single process).
 * - Rate limits are raised for this server; a test of 429 needs its own server.
 * - Mail: e2e/web-server.ts runs a real SMTP server next to the app, AUTH_URL is the
 *   server's own address, and the specs read what it received (e2e/support/mailbox.ts).
 * - Chromium is Debian's (/usr/bin/chromium, `apt-get install -y chromium`); Playwright
 *   never downloads a browser.
 */

const PORT = Number(process.env.E2E_PORT ?? 3210);
const BASE_URL = `http://127.0.0.1:${PORT}`;
const CI = Boolean(process.env.CI);

// The config is evaluated again in every worker; keep one secret per run.
process.env.E2E_AUTH_SECRET ??= randomBytes(32).toString('base64url');
// Where the web server's SMTP server puts every message it receives (e2e/support/mailbox.ts).
process.env.E2E_MAILBOX ??= mkdtempSync(path.join(os.tmpdir(), 'cda-e2e-mail-'));

export default defineConfig({
  testDir: './e2e',
  outputDir: './test-results',
  fullyParallel: false,
  workers: 2,
  retries: 0,
  forbidOnly: CI,
  timeout: 30_000,
  expect: { timeout: 5_000 },
  reporter: CI ? [['list']] : [['list'], ['html', { open: 'never', outputFolder: 'playwright-report' }]],
  use: {
    baseURL: BASE_URL,
    trace: 'retain-on-failure',
    screenshot: 'only-on-failure',
    video: 'off',
    actionTimeout: 10_000,
    navigationTimeout: 15_000,
  },
  projects: [
    {
      name: 'chromium',
      use: {
        ...devices['Desktop Chrome'],
        launchOptions: {
          executablePath: '/usr/bin/chromium',
          args: [
            '--disable-background-networking',
            '--disable-component-update',
            '--disable-sync',
            '--no-first-run',
            '--disable-quic',
          ],
        },
      },
    },
  ],
  webServer: {
    command: 'node --import tsx e2e/web-server.ts',
    url: `${BASE_URL}/api/v1/openapi.json`,
    reuseExistingServer: false,
    timeout: 120_000,
    stdout: 'pipe',
    stderr: 'pipe',
    gracefulShutdown: { signal: 'SIGTERM', timeout: 10_000 },
    env: {
      E2E_PORT: String(PORT),
      NEXT_TELEMETRY_DISABLED: '1',
      AUTH_SECRET: process.env.E2E_AUTH_SECRET,
      AUTH_TRUST_HOST: 'true',
      RATE_LIMIT_GENERAL_PER_WINDOW: '100000',
      RATE_LIMIT_EXPORT_PER_WINDOW: '10000',
      RATE_LIMIT_AUTH_FAILURES_PER_MINUTE: '100000',
      RATE_LIMIT_SIGN_IN_ADDRESS_PER_WINDOW: '100000',
      RATE_LIMIT_SIGN_IN_ACCOUNT_PER_WINDOW: '100000',
      RATE_LIMIT_PASSWORD_RESET_PER_HOUR: '100000',
      RATE_LIMIT_ACCOUNT_MAIL_PER_HOUR: '100000',
      // Mail goes to a real SMTP server e2e/web-server.ts starts, and lands in this directory.
      E2E_MAILBOX: process.env.E2E_MAILBOX,
      // e2e/webhooks.spec.ts runs its receiver on 127.0.0.1.
      WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
    },
  },
});
