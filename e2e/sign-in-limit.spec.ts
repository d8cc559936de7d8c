import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { expect, test, type Page } from '@playwright/test';
import { DEMO_PASSWORD, DEMO_USERS } from '@/db/seed/demo';
import { awayFromWindowEdge } from '../tests/helpers/window-edge';
import { fillSignInForm } from './support/session';

/**
 * The sign-in limit in the browser, on the production build (issue 17): the sign-in
 * form's server action and next-auth's credentials callback refuse the attempt after the
 * limit with the time to wait, and the form waits that long. The suite's own server has
 * the limits raised, so this file starts a second one (e2e/web-server.ts: its own PGlite
 * database and in-memory limits) with three failed attempts per address.
 */

const PORT = Number(process.env.E2E_PORT ?? 3210) + 7;
const BASE = `http://127.0.0.1:${PORT}`;
let server: ChildProcess | undefined;

test.describe.configure({ mode: 'serial' });

test.beforeAll(async () => {
  test.setTimeout(150_000);
  const { DATABASE_URL: _d, REDIS_URL: _r, UPSTASH_REDIS_REST_URL: _u, KV_REST_API_URL: _k, ...env } = process.env;
  server = spawn(process.execPath, ['--import', 'tsx', path.join('e2e', 'web-server.ts')], {
    cwd: path.resolve(import.meta.dirname, '..'),
    env: {
      ...env,
      E2E_PORT: String(PORT),
      NEXT_TELEMETRY_DISABLED: '1',
      AUTH_SECRET: process.env.E2E_AUTH_SECRET ?? 'sign-in-limit-secret-at-least-32-characters',
      AUTH_TRUST_HOST: 'true',
      RATE_LIMIT_STORE: 'memory',
      RATE_LIMIT_SIGN_IN_ADDRESS_PER_WINDOW: '3',
    },
    stdio: 'ignore',
  });
  const deadline = Date.now() + 140_000;
  for (;;) {
    try {
      if ((await fetch(`${BASE}/api/v1/openapi.json`)).ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline || server.exitCode !== null) throw new Error('the second server did not start');
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
});

test.afterAll(() => {
  server?.kill('SIGTERM');
});

/** Submits the form and waits for the server action's answer (the message may not change between attempts). */
async function submit(page: Page, email: string, password: string): Promise<void> {
  const answered = page.waitForResponse((r) => r.request().method() === 'POST' && new URL(r.url()).pathname === '/sign-in');
  await fillSignInForm(page, email, password);
  await answered;
}

test('the sign-in form says when to try again after too many failed attempts, and waits', async ({ page }) => {
  // The attempts are counted exactly within one 60 s window of the address's limit.
  test.setTimeout(150_000);
  await awayFromWindowEdge(60, 40_000);
  await page.goto(`${BASE}/sign-in`);
  const alert = page.locator('form .alert-error');
  for (let i = 0; i < 3; i++) {
    await submit(page, DEMO_USERS.alice.email, `wrong password ${i}`);
    await expect(alert).toHaveText('Wrong email or password.');
  }
  // The fourth, even with the right password: refused, with the time to wait.
  await submit(page, DEMO_USERS.alice.email, DEMO_PASSWORD);
  await expect(alert).toHaveText(/^Too many failed sign-in attempts\. Try again in \d+ seconds\.$/);
  await expect(page.getByRole('button', { name: /^Try again in \d+ s$/ })).toBeDisabled();
  await expect(page).toHaveURL(/\/sign-in/);

  // next-auth's own callback is limited too: 429 with Retry-After.
  const csrf = await page.request.get(`${BASE}/api/auth/csrf`);
  const { csrfToken } = (await csrf.json()) as { csrfToken: string };
  const res = await page.request.post(`${BASE}/api/auth/callback/credentials`, {
    form: { csrfToken, email: DEMO_USERS.bob.email, password: DEMO_PASSWORD, callbackUrl: '/' },
    maxRedirects: 0,
  });
  expect(res.status()).toBe(429);
  expect(Number(res.headers()['retry-after'])).toBeGreaterThanOrEqual(1);
  expect(await res.text()).toContain('Too many failed sign-in attempts');
});
