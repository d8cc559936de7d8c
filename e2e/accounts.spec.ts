import { randomBytes } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { expect, test, type Browser, type Locator, type Page } from '@playwright/test';
import { mailTo, waitForMail, type ReceivedMail } from './support/mailbox';
import { fillSignInForm, signInOverHttp } from './support/session';

/**
 * Issue 24's mail flows end to end against the production build, with the real SMTP
 * server e2e/web-server.ts runs next to it (AUTH_URL is the server's own address): sign-up
 * and its verification link, an unverified account's refusals and "Send the link again",
 * sign-up with a taken address, "Forgot password?" and its reset link, bad links, and a
 * forged host that must not change a link. Every account here is new.
 */

const BASE = () => test.info().project.use.baseURL!;
const PASSWORD = 'correct horse battery staple';
const newEmail = (label: string) => `${label}-${randomBytes(5).toString('hex')}@example.com`;

/** Waits until React has hydrated the element (a click before that would post the form without JavaScript). */
async function hydrated(locator: Locator): Promise<Locator> {
  await expect.poll(() => locator.evaluate((el) => Object.keys(el).some((k) => k.startsWith('__reactProps'))), { message: 'the page hydrates' }).toBe(true);
  return locator;
}

const alertText = (page: Page) => page.locator('.alert-error');

// Each test signs up, verifies and hashes passwords several times: 5 to 9 s on a quiet
// two-core machine and three times that on a busy one, where the default 30 s ran out
// (the reset journey, in CI). As e2e/account-settings.spec.ts.
test.describe.configure({ timeout: 120_000 });

async function signUpForm(page: Page, email: string, password = PASSWORD): Promise<void> {
  await page.goto('/sign-up');
  await hydrated(page.getByRole('button', { name: 'Create account' }));
  await page.getByLabel('Name').fill('Mail Flow');
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await (await hydrated(page.getByRole('button', { name: 'Create account' }))).click();
  await expect(page.getByRole('status')).toContainText('Check your e-mail to finish');
}

function linkOf(mail: ReceivedMail, path: string): string {
  const link = mail.links.find((l) => new URL(l).pathname === path);
  expect(link, mail.text).toBeDefined();
  // AUTH_URL's origin, the only one a link may have; the token after '#', nothing else.
  expect(new URL(link!).origin).toBe(new URL(BASE()).origin);
  expect(new URL(link!).search).toBe('');
  return link!;
}

async function verify(page: Page, email: string, subject = /^Verify your e-mail address/): Promise<void> {
  await page.goto(linkOf(await waitForMail(email, subject), '/verify-email'));
  await (await hydrated(page.getByRole('button', { name: 'Verify my e-mail address' }))).click();
  await expect(page.getByRole('status')).toContainText(`Your e-mail address ${email} is verified`);
}

async function signIn(page: Page, email: string, password = PASSWORD): Promise<void> {
  await page.goto('/sign-in?callbackUrl=%2Fsettings%2Fapi-keys');
  await fillSignInForm(page, email, password);
  await page.waitForURL('**/settings/api-keys');
}

test.describe('sign-up and verification', () => {
  test('a new address: "Check your e-mail", a verification link with no address or id in it, then API keys', async ({ page }) => {
    const email = newEmail('verify');
    await signUpForm(page, email);
    const mail = await waitForMail(email, /^Verify your e-mail address for Contract Data API$/);
    expect(mail.html).toContain('Contract Data API');
    const link = linkOf(mail, '/verify-email');
    expect(decodeURIComponent(link)).not.toContain(email);
    expect(new URL(link).hash).toMatch(/^#cdver_[0-9A-Za-z]{38}$/);
    await verify(page, email);
    // The token left the address bar.
    expect(page.url()).not.toContain('cdver_');
    await signIn(page, email);
    await expect(page.getByText('is not verified yet')).toHaveCount(0);
    const created = await page.request.post('/api/trpc/apiKeys.create', { data: { name: 'verified', expiresInDays: 7 } });
    expect(created.status()).toBe(200);
    // Used once: the same link again is refused with the one message.
    await page.goto(link);
    await (await hydrated(page.getByRole('button', { name: 'Verify my e-mail address' }))).click();
    await expect(alertText(page)).toContainText('This link does not work');
  });

  test('unverified: signs in, the settings pages say why with "Send the link again", and the server refuses keys, feeds and webhooks', async ({ page }) => {
    const email = newEmail('unverified');
    await signUpForm(page, email);
    await waitForMail(email, /^Verify your e-mail address/);
    await page.waitForTimeout(500);
    await signIn(page, email);
    for (const path of ['/settings/api-keys', '/settings/calendar', '/settings/webhooks']) {
      await page.goto(path);
      await expect(page.getByRole('status').filter({ hasText: 'is not verified yet' })).toContainText('cannot create API keys, calendar feeds or webhook endpoints');
    }
    for (const [procedure, input] of [
      ['apiKeys.create', { name: 'k', expiresInDays: 7 }],
      ['calendarFeeds.create', { name: 'f' }],
      ['webhooks.create', { url: 'https://hooks.example.com/x' }],
    ] as const) {
      const res = await page.request.post(`/api/trpc/${procedure}`, { data: input });
      expect(res.status(), procedure).toBe(403);
      expect(await res.text()).toContain('Verify your e-mail address first');
    }
    await page.goto('/settings/api-keys');
    await (await hydrated(page.getByRole('button', { name: 'Send the link again' }))).click();
    await expect(page.getByText(`We sent a new link to ${email}`)).toBeVisible();
    await expect.poll(() => mailTo(email).filter((m) => /^Verify/.test(m.subject)).length, { timeout: 20_000 }).toBe(2);
    const second = mailTo(email).filter((m) => /^Verify/.test(m.subject))[1]!;
    await page.goto(linkOf(second, '/verify-email'));
    await (await hydrated(page.getByRole('button', { name: 'Verify my e-mail address' }))).click();
    await expect(page.getByRole('status')).toContainText('is verified');
    await page.goto('/settings/api-keys');
    await expect(page.getByText('is not verified yet')).toHaveCount(0);
    expect((await page.request.post('/api/trpc/calendarFeeds.create', { data: { name: 'f' } })).status()).toBe(200);
  });

  test('an address with an account: the same words, and its owner is told how to reset the password; nothing changes', async ({ page, playwright }) => {
    const email = newEmail('taken');
    await signUpForm(page, email);
    await verify(page, email);
    await signUpForm(page, email, 'an attacker password');
    const notice = await waitForMail(email, /^Someone tried to sign up to Contract Data API with your address$/);
    expect(linkOf(notice, '/forgot-password')).toBe(`${new URL(BASE()).origin}/forgot-password`);
    expect(mailTo(email).filter((m) => /^Verify/.test(m.subject))).toHaveLength(1);
    const api = await playwright.request.newContext({ baseURL: BASE() });
    await signInOverHttp(api, email, PASSWORD);
    await api.dispose();
  });
});

test.describe('forgot password', () => {
  async function askForLink(page: Page, email: string): Promise<void> {
    await page.goto('/sign-in');
    await page.getByRole('link', { name: 'Forgot password?' }).click();
    await page.waitForURL('**/forgot-password');
    const send = await hydrated(page.getByRole('button', { name: 'Send me a link' }));
    await page.getByLabel('Email').fill(email);
    await send.click();
    await expect(page.getByRole('status')).toHaveText(/^Check your e-mail: if an account has this address, we sent it a link to set a new password\./);
  }

  test('a reset link sets a new password, ends every session, and sends "password changed"; used, tampered or replaced links change nothing', async ({ page, browser, playwright }) => {
    const email = newEmail('reset');
    await signUpForm(page, email);
    await verify(page, email);
    // A session in another browser, which the reset must end.
    const elsewhere = await playwright.request.newContext({ baseURL: BASE() });
    await signInOverHttp(elsewhere, email, PASSWORD);
    expect((await elsewhere.get('/api/trpc/apiKeys.list')).status()).toBe(200);

    await askForLink(page, email);
    const first = linkOf(await waitForMail(email, /^Reset your Contract Data API password$/), '/reset-password');
    // A newer link replaces it.
    await askForLink(page, email);
    await expect.poll(() => mailTo(email).filter((m) => /^Reset/.test(m.subject)).length, { timeout: 20_000 }).toBe(2);
    const second = linkOf(mailTo(email).filter((m) => /^Reset/.test(m.subject))[1]!, '/reset-password');
    expect(second).not.toBe(first);

    const tampered = second.slice(0, -8) + (second.at(-8) === 'A' ? 'B' : 'A') + second.slice(-7);
    for (const bad of [first, tampered]) {
      await page.goto(bad);
      await page.getByLabel('New password').fill('a replaced password');
      await (await hydrated(page.getByRole('button', { name: 'Set the new password' }))).click();
      await expect(alertText(page)).toContainText('This link does not work');
    }
    await page.goto(second);
    await page.getByLabel('New password').fill('short');
    await (await hydrated(page.getByRole('button', { name: 'Set the new password' }))).click();
    // The field's error (React then empties the form: fill it again only after the answer).
    await expect(page.locator('#field-password-error')).toHaveText('At least 10 characters.');
    await page.getByLabel('New password').fill('the brand new password');
    await (await hydrated(page.getByRole('button', { name: 'Set the new password' }))).click();
    await page.waitForURL('**/sign-in?notice=password-changed');
    await expect(page.getByRole('status')).toContainText('Your password was changed');

    const changed = await waitForMail(email, /^Your Contract Data API password was changed$/);
    expect(changed.text).toMatch(/changed on \d{4}-\d\d-\d\d \d\d:\d\d UTC/);
    // Every session ended.
    expect((await elsewhere.get('/api/trpc/apiKeys.list')).status()).toBe(401);
    await elsewhere.dispose();
    // The old password fails, the new one works.
    await fillSignInForm(page, email, PASSWORD);
    await expect(page.locator('form .alert-error')).toHaveText('Wrong email or password.');
    await signIn(page, email, 'the brand new password');
    // Used: refused, nothing changed.
    await usedLinkRefused(browser, second);
  });

  test('an unknown address: the same words, no mail', async ({ page }) => {
    const email = newEmail('nobody');
    await askForLink(page, email);
    await page.waitForTimeout(2_000);
    expect(mailTo(email)).toEqual([]);
  });

  test('a forged Host or X-Forwarded-Host changes no link: AUTH_URL is the only origin', async ({ page }) => {
    const email = newEmail('forged');
    await signUpForm(page, email);
    await verify(page, email);
    const base = new URL(BASE());
    // The browser's own request for a link, recorded, then replayed with forged host headers
    // (node:http: a browser cannot forge Host). The Origin matches the forged host, so that
    // Next.js's own check of server actions lets it through, as an attacker would arrange.
    let recorded: { headers: Record<string, string>; body: Buffer } | undefined;
    page.on('request', (req) => {
      if (req.method() === 'POST' && new URL(req.url()).pathname === '/forgot-password') {
        void req.allHeaders().then((headers) => (recorded = { headers, body: req.postDataBuffer() ?? Buffer.alloc(0) }));
      }
    });
    await page.goto('/forgot-password');
    await page.getByLabel('Email').fill(email);
    await (await hydrated(page.getByRole('button', { name: 'Send me a link' }))).click();
    await expect(page.getByRole('status')).toContainText('Check your e-mail');
    await expect.poll(() => recorded !== undefined).toBe(true);
    const replay = (forged: Record<string, string>) =>
      new Promise<number>((resolve, reject) => {
        const headers: Record<string, string> = {};
        for (const [name, value] of Object.entries(recorded!.headers)) if (!name.startsWith(':') && name !== 'host' && name !== 'origin') headers[name] = value;
        const req = httpRequest({ host: base.hostname, port: base.port, path: '/forgot-password', method: 'POST', headers: { ...headers, ...forged, 'content-length': String(recorded!.body.length) } }, (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        });
        req.on('error', reject);
        req.end(recorded!.body);
      });
    expect(await replay({ host: 'evil.example', origin: 'http://evil.example' })).toBe(200);
    expect(await replay({ host: base.host, 'x-forwarded-host': 'evil.example', 'x-forwarded-proto': 'https', origin: 'https://evil.example' })).toBe(200);
    // Three requests, three links (each replaces the one before), all on AUTH_URL's origin.
    await expect.poll(() => mailTo(email).filter((m) => /^Reset/.test(m.subject)).length, { timeout: 30_000 }).toBe(3);
    for (const mail of mailTo(email)) {
      expect(mail.text + mail.html).not.toContain('evil.example');
      for (const link of mail.links) expect(new URL(link).origin).toBe(base.origin);
    }
  });
});

/** A used reset link, opened again: the one clear message. */
async function usedLinkRefused(browser: Browser, usedLink: string): Promise<void> {
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.goto(usedLink);
  await page.getByLabel('New password').fill('yet another new password');
  await (await hydrated(page.getByRole('button', { name: 'Set the new password' }))).click();
  await expect(alertText(page)).toContainText('This link does not work');
  await context.close();
}
