import { randomBytes } from 'node:crypto';
import { expect, test, type Browser, type Page } from '@playwright/test';
import { DEMO_PASSWORD, DEMO_USERS } from '@/db/seed/demo';
import { awayFromWindowEdge } from '../tests/helpers/window-edge';
import { startOwnServer, type OwnServer } from './support/own-server';
import { fillSignInForm } from './support/session';

/**
 * The sign-in limit in the browser, on the production build (issue 17): the sign-in
 * form's server action and next-auth's credentials callback refuse the attempt after the
 * limit with the time to wait, and the form waits that long. The suite's own server has
 * the limits raised, so this file starts a second one (e2e/web-server.ts: its own PGlite
 * database and in-memory limits) with three failed attempts per address. The sign-up form
 * is limited too: every sign-up counts against the address (signUpLimited in
 * server/auth/sign-in-limit.ts).
 */

const PORT = Number(process.env.E2E_PORT ?? 3210) + 7;
const CLIENT_ADDRESS_HEADER = 'x-e2e-client-address';
const BASE = `http://127.0.0.1:${PORT}`;
let server: OwnServer | undefined;

test.describe.configure({ mode: 'serial' });

test.beforeAll(async () => {
  test.setTimeout(150_000);
  server = await startOwnServer(PORT, {
    RATE_LIMIT_SIGN_IN_ADDRESS_PER_WINDOW: '3',
    // A request without this header counts in the one shared bucket, as with no proxy
    // configured; the sign-up test names its own addresses with it.
    CLIENT_ADDRESS_HEADER: CLIENT_ADDRESS_HEADER,
  });
});

test.afterAll(() => {
  server?.stop();
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

/** A page whose requests, server actions included, come from `address` (CLIENT_ADDRESS_HEADER). */
async function pageFrom(browser: Browser, address: string): Promise<Page> {
  const context = await browser.newContext({ extraHTTPHeaders: { [CLIENT_ADDRESS_HEADER]: address } });
  return context.newPage();
}

test('the sign-up form, once the address is out of attempts, says when to try again and creates no account', async ({ browser }) => {
  test.setTimeout(150_000);
  await awayFromWindowEdge(60, 40_000);
  const email = `limited-${randomBytes(6).toString('hex')}@example.com`;
  const password = 'correct horse battery staple';

  // Three failed sign-ins use up this address's attempts.
  const page = await pageFrom(browser, '198.51.100.23');
  await page.goto(`${BASE}/sign-in`);
  for (let i = 0; i < 3; i++) {
    await submit(page, DEMO_USERS.alice.email, `wrong password ${i}`);
    await expect(page.locator('form .alert-error')).toHaveText('Wrong email or password.');
  }

  // The sign-up from the same address: refused, with the time to wait, and the button waits.
  await page.goto(`${BASE}/sign-up`);
  const answered = page.waitForResponse((r) => r.request().method() === 'POST' && new URL(r.url()).pathname === '/sign-up');
  await page.getByLabel('Name').fill('Limited');
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Create account' }).click();
  await answered;
  await expect(page.locator('form .alert-error')).toHaveText(/^Too many failed sign-in attempts\. Try again in \d+ seconds\.$/);
  await expect(page.getByRole('button', { name: /^Try again in \d+ s$/ })).toBeDisabled();
  await expect(page).toHaveURL(/\/sign-up/);
  await page.context().close();

  // No account was made: from another address, signing in with that e-mail and password
  // fails as for any unknown e-mail, and the same sign-up then succeeds (no "already exists").
  const other = await pageFrom(browser, '198.51.100.77');
  await other.goto(`${BASE}/sign-in`);
  await submit(other, email, password);
  await expect(other.locator('form .alert-error')).toHaveText('Wrong email or password.');
  await other.goto(`${BASE}/sign-up`);
  await other.getByLabel('Name').fill('Limited');
  await other.getByLabel('Email').fill(email);
  await other.getByLabel('Password').fill(password);
  await other.getByRole('button', { name: 'Create account' }).click();
  await expect(other.getByRole('status')).toContainText('Check your e-mail to finish');
  // The account exists a moment later (created after the answer; unverified, it can sign in).
  await other.waitForTimeout(2_000);
  await other.goto(`${BASE}/sign-in`);
  await submit(other, email, password);
  await other.waitForURL((url) => !url.pathname.startsWith('/sign-in'));
  await other.context().close();
});
