import { randomBytes } from 'node:crypto';
import { expect, test, type Browser, type BrowserContext, type Page } from '@playwright/test';
import { DEMO_PASSWORD, DEMO_USERS } from '@/db/seed/demo';
import { startSmtpServer, type TestSmtpServer } from '../tests/helpers/smtp-server';
import { startOwnServer, type OwnServer } from './support/own-server';
import { fillSignInForm, mintKey, signInOverHttp } from './support/session';

/**
 * Settings → Account (issue 24) against the production build, on a server of its own
 * that sends its mail to a real SMTP server started here: changing the password keeps
 * this browser signed in, signs every other one out and sends an e-mail with the time and
 * the client address; a wrong current password is refused; a cross-site post of the
 * form's action changes nothing; deleting the account ends its keys and sessions at once
 * and sends a confirmation; the sole owner of an organisation is told why not.
 */

const PASSWORD = 'correct horse battery staple';
const NEW_PASSWORD = 'a new and longer passphrase';
const PORT = Number(process.env.E2E_PORT ?? 3210) + 40;
/** The client address every browser here reports (CLIENT_ADDRESS_HEADER), as a proxy in front would. */
const CLIENT = '203.0.113.24';
let server: OwnServer;
let smtp: TestSmtpServer;
const BASE = () => server.base;

// Each test signs up, signs in and hashes passwords several times: slow on a loaded machine.
test.describe.configure({ mode: 'serial', timeout: 120_000 });
test.beforeAll(async () => {
  test.setTimeout(180_000);
  smtp = await startSmtpServer();
  server = await startOwnServer(PORT, {
    SMTP_URL: smtp.url,
    MAIL_FROM: 'Contract Data API <no-reply@example.test>',
    MAIL_TRANSPORT: 'smtp',
    AUTH_URL: `http://127.0.0.1:${PORT}`,
    CLIENT_ADDRESS_HEADER: 'x-real-ip',
    // Every browser here is one client address: room for the sign-ups and sign-ins of the
    // specs (the limits themselves are tests/server/account-settings.test.ts's).
    RATE_LIMIT_SIGN_IN_ADDRESS_PER_WINDOW: '1000',
    RATE_LIMIT_SIGN_IN_ACCOUNT_PER_WINDOW: '1000',
    RATE_LIMIT_GENERAL_PER_WINDOW: '100000',
  });
});
// A failed test shows what the server logged.
test.afterEach(async ({}, testInfo) => {
  if (testInfo.status !== testInfo.expectedStatus) await testInfo.attach('server log', { body: server.log().slice(-20_000), contentType: 'text/plain' });
});
test.afterAll(async () => {
  server?.stop();
  await smtp?.close();
});

const newContext = (browser: Browser) => browser.newContext({ baseURL: BASE(), extraHTTPHeaders: { 'x-real-ip': CLIENT } });

/**
 * A new account (the sign-up form; the account exists once its verification e-mail has
 * arrived, since sign-up finishes after its answer), signed in through the sign-in form
 * in a browser context of its own.
 */
async function newAccount(browser: Browser): Promise<{ email: string; context: BrowserContext; page: Page }> {
  const email = `account-${randomBytes(6).toString('hex')}@example.com`;
  const context = await newContext(browser);
  const page = await context.newPage();
  await page.goto('/sign-up');
  await page.getByLabel('Name').fill('Account Settings');
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Create account' }).click();
  await smtp.waitFor((m) => m.to.includes(email), 30_000);
  await page.goto('/sign-in?callbackUrl=%2Fsettings%2Faccount');
  await fillSignInForm(page, email, PASSWORD);
  await page.waitForURL((url) => url.pathname === '/settings/account');
  return { email, context, page };
}

/** Another browser signed in to the same account. */
async function secondBrowser(browser: Browser, email: string, password: string): Promise<Page> {
  const page = await (await newContext(browser)).newPage();
  await page.goto('/sign-in?callbackUrl=%2Fsettings%2Faccount');
  await fillSignInForm(page, email, password);
  await page.waitForURL((url) => url.pathname === '/settings/account');
  return page;
}

async function changePassword(page: Page, current: string, next: string): Promise<void> {
  await page.goto('/settings/account');
  await page.getByLabel('Current password').fill(current);
  await page.getByLabel('New password').fill(next);
  await page.getByRole('button', { name: 'Change password' }).click();
}

async function signInWorks(browser: Browser, email: string, password: string): Promise<boolean> {
  const api = (await newContext(browser)).request;
  const csrf = (await (await api.get(`${BASE()}/api/auth/csrf`)).json()) as { csrfToken: string };
  const res = await api.post(`${BASE()}/api/auth/callback/credentials`, { form: { csrfToken: csrf.csrfToken, email, password, callbackUrl: '/' }, maxRedirects: 0 });
  return res.status() === 302 && !(res.headers().location ?? '').includes('error');
}

test.describe('change password', () => {
  test('this browser stays signed in, another one is signed out; only the new password signs in', async ({ browser }) => {
    const { email, page } = await newAccount(browser);
    const other = await secondBrowser(browser, email, PASSWORD);

    await changePassword(page, PASSWORD, NEW_PASSWORD);
    // (The settings layout has a status of its own: the notice of an unverified address.)
    await expect(page.getByRole('status').filter({ hasText: 'Your password was changed' })).toHaveText('Your password was changed. Every other session has been signed out.');
    // This browser: still signed in, on its next request too.
    await page.reload();
    await expect(page).toHaveURL(/\/settings\/account$/);
    await expect(page.getByText(`Signed in as ${email}`)).toBeVisible();
    // The other browser: its next request is signed out.
    await other.goto('/settings/account');
    await expect(other).toHaveURL(/\/sign-in\?/);

    expect(await signInWorks(browser, email, PASSWORD)).toBe(false);
    expect(await signInWorks(browser, email, NEW_PASSWORD)).toBe(true);

    // The e-mail, through the worker's outbox and SMTP: when and from which address.
    const mail = await smtp.waitFor((m) => m.to.includes(email) && /password was changed/.test(m.subject), 30_000);
    expect(mail.text).toMatch(/changed on \d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC from the address 203\.0\.113\.24\./);
    expect(mail.html).toContain('203.0.113.24');
    expect(mail.text).not.toContain(NEW_PASSWORD);
    for (const link of mail.links) expect(new URL(link).origin).toBe(BASE());
  });

  test('a wrong current password, a too short or unchanged new one: a clear message, nothing changes', async ({ browser }) => {
    const { email, page } = await newAccount(browser);
    await changePassword(page, 'not my password at all', NEW_PASSWORD);
    await expect(page.locator('#field-currentPassword-error')).toHaveText('That is not your current password.');
    await changePassword(page, PASSWORD, 'short');
    await expect(page.locator('#field-newPassword-error')).toHaveText('At least 10 characters.');
    await changePassword(page, PASSWORD, PASSWORD);
    await expect(page.locator('#field-newPassword-error')).toHaveText('Choose a password other than your current one.');
    await page.reload();
    await expect(page.getByText(`Signed in as ${email}`)).toBeVisible();
    expect(await signInWorks(browser, email, PASSWORD)).toBe(true);
  });

  test("the form's server action posted from another site (the session cookie sent along) changes nothing", async ({ browser, playwright }) => {
    const { email, context, page } = await newAccount(browser);
    // The action's id and body as the page sends them: a wrong current password, to see the request.
    const sent = page.waitForRequest((r) => r.method() === 'POST' && r.url().endsWith('/settings/account'));
    await changePassword(page, 'wrong current password', NEW_PASSWORD);
    const request = await sent;
    await expect(page.locator('#field-currentPassword-error')).toBeVisible();
    const forged = (request.postData() ?? '').replace('wrong current password', PASSWORD);
    expect(forged).toContain(NEW_PASSWORD);

    const attacker = await playwright.request.newContext({ storageState: await context.storageState(), extraHTTPHeaders: { 'x-real-ip': CLIENT } });
    const headers = await request.allHeaders();
    const res = await attacker.post(`${BASE()}/settings/account`, {
      headers: {
        'content-type': headers['content-type']!,
        'next-action': headers['next-action']!,
        accept: 'text/x-component',
        origin: 'https://evil.example',
      },
      data: forged,
      maxRedirects: 0,
    });
    expect(res.status()).not.toBe(200);
    await attacker.dispose();
    expect(await signInWorks(browser, email, NEW_PASSWORD)).toBe(false);
    expect(await signInWorks(browser, email, PASSWORD)).toBe(true);

    // The same request from the site itself is what the form does: it does change it.
    const own = await playwright.request.newContext({ storageState: await context.storageState(), extraHTTPHeaders: { 'x-real-ip': CLIENT } });
    const ok = await own.post(`${BASE()}/settings/account`, {
      headers: { 'content-type': headers['content-type']!, 'next-action': headers['next-action']!, accept: 'text/x-component', origin: new URL(BASE()).origin },
      data: forged,
      maxRedirects: 0,
    });
    expect(ok.status()).toBe(200);
    await own.dispose();
    expect(await signInWorks(browser, email, NEW_PASSWORD)).toBe(true);
  });
});

test.describe('delete account', () => {
  test('asks for the typed address and the password; then keys stop working and every session ends at once', async ({ browser, playwright }) => {
    // carol (demo data, verified, in no organisation) on this spec's own database: new
    // accounts cannot create keys until their address is verified.
    const email = DEMO_USERS.carol.email;
    const context = await newContext(browser);
    const page = await context.newPage();
    await page.goto('/sign-in?callbackUrl=%2Fsettings%2Faccount');
    await fillSignInForm(page, email, DEMO_PASSWORD);
    await page.waitForURL((url) => url.pathname === '/settings/account');
    const other = await secondBrowser(browser, email, DEMO_PASSWORD);
    const api = await playwright.request.newContext({ baseURL: BASE(), extraHTTPHeaders: { 'x-real-ip': CLIENT } });
    await signInOverHttp(api, email, DEMO_PASSWORD);
    const { key } = await mintKey(api, 'deleted with the account');
    const list = () => api.get('/api/v1/contracts?limit=1', { headers: { authorization: `Bearer ${key}` } });
    expect((await list()).status()).toBe(200);

    await page.getByLabel('Your e-mail address').fill(`other-${email}`);
    await page.getByLabel('Password', { exact: true }).fill(DEMO_PASSWORD);
    await page.getByRole('button', { name: 'Delete my account' }).click();
    await expect(page.locator('#field-confirmEmail-error')).toHaveText('Type the e-mail address of this account exactly.');
    await page.getByLabel('Your e-mail address').fill(email);
    await page.getByLabel('Password', { exact: true }).fill('not the password');
    await page.getByRole('button', { name: 'Delete my account' }).click();
    await expect(page.locator('#field-password-error')).toHaveText('That is not your password.');
    expect((await list()).status()).toBe(200);

    await page.getByLabel('Your e-mail address').fill(email);
    await page.getByLabel('Password', { exact: true }).fill(DEMO_PASSWORD);
    await page.getByRole('button', { name: 'Delete my account' }).click();
    await page.waitForURL((url) => url.pathname === '/account-deleted');
    await expect(page.getByRole('heading', { name: 'Your account was deleted' })).toBeVisible();

    expect((await list()).status()).toBe(401);
    await page.goto('/settings/account');
    await expect(page).toHaveURL(/\/sign-in\?/);
    await other.goto('/settings/account');
    await expect(other).toHaveURL(/\/sign-in\?/);
    expect((await api.post('/api/trpc/apiKeys.create', { data: { name: 'after', expiresInDays: 7 } })).status()).toBe(401);
    expect(await signInWorks(browser, email, DEMO_PASSWORD)).toBe(false);
    await api.dispose();

    const mail = await smtp.waitFor((m) => m.to.includes(email) && /account was deleted/.test(m.subject), 30_000);
    expect(mail.text).toContain('from the address 203.0.113.24');
  });

  test("the sole owner of an organisation is told why the account cannot be deleted, and gets no form", async ({ browser }) => {
    // alice is the only owner of Acme in the demo data (db/seed/demo.ts).
    const page = await (await newContext(browser)).newPage();
    await page.goto('/sign-in?callbackUrl=%2Fsettings%2Faccount');
    await fillSignInForm(page, DEMO_USERS.alice.email, DEMO_PASSWORD);
    await page.waitForURL((url) => url.pathname === '/settings/account');
    await expect(page.getByText('You cannot delete your account while an organisation would be left without an owner')).toBeVisible();
    await expect(page.getByText(/Acme.*: you are its only owner/)).toBeVisible();
    await expect(page.getByRole('button', { name: 'Delete my account' })).toHaveCount(0);
  });
});
