import { expect, test, type Page, type TestInfo } from '@playwright/test';
import { DEMO_PASSWORD, DEMO_USERS } from '@/db/seed/demo';
import { API, readResponse, type ErrorBody } from './support/api';
import { snapshot } from './support/artifacts';
import { fillSignInForm, signInOverHttp } from './support/session';
import { signUpVerified } from './support/sign-up';

/**
 * Settings -> API Keys in Debian's Chromium (issue 3): sign in, create a key, see it once,
 * copy it, find only its hint afterwards, use it against the REST API, revoke it. A
 * screenshot of each state is kept under test-results/ and attached to the report.
 */

const ALICE = DEMO_USERS.alice;
const KEY_PATTERN = /^cdapi_[0-9A-Za-z]{38}$/;

test.use({ permissions: ['clipboard-read', 'clipboard-write'] });

const createButton = (page: Page) => page.getByRole('button', { name: 'Create API key', exact: true });
const keyRow = (page: Page, name: string) =>
  page.getByTestId('api-key-row').filter({ has: page.getByRole('cell', { name, exact: true }) });

/** Waits until React has hydrated the key manager, so that its buttons react. */
async function waitForHydration(page: Page): Promise<void> {
  await expect
    .poll(() => createButton(page).evaluate((el) => Object.keys(el).some((k) => k.startsWith('__reactProps'))), {
      message: 'the API keys page hydrates',
    })
    .toBe(true);
}

/** Where keyboard focus is: inside the open dialog, on the page behind it, or nowhere. */
function focusPlace(page: Page): Promise<{ place: 'dialog' | 'page' | 'none'; label: string }> {
  return page.evaluate(() => {
    const active = document.activeElement;
    const dialog = document.querySelector('dialog[open]');
    const label = active ? `${active.tagName.toLowerCase()} ${(active.textContent ?? '').trim().slice(0, 40)}` : 'none';
    if (!active || active === document.body || active === document.documentElement) return { place: 'none', label };
    return { place: dialog?.contains(active) ? 'dialog' : 'page', label };
  });
}

/** Presses Tab until `target` has the focus (keyboard only), failing after `max` presses. */
async function tabTo(page: Page, target: ReturnType<Page['getByRole']>, max = 40): Promise<void> {
  for (let i = 0; i < max; i++) {
    await page.keyboard.press('Tab');
    if (await target.evaluate((el) => el === document.activeElement)) return;
  }
  throw new Error(`Tab never reached ${target}`);
}

test('a wrong email or a wrong password gets the same generic error', async ({ page }, testInfo) => {
  for (const [email, password] of [
    ['nobody-here@example.com', DEMO_PASSWORD],
    [ALICE.email, 'not-the-password'],
  ] as const) {
    await page.goto('/sign-in');
    const alert = page.locator('form').getByRole('alert');
    await expect(alert).toHaveCount(0);
    await fillSignInForm(page, email, password);
    await expect(alert).toHaveText('Wrong email or password.');
    await expect(page).toHaveURL(/\/sign-in/);
    await snapshot(page, testInfo, email === ALICE.email ? 'sign-in-wrong-password' : 'sign-in-unknown-email');
  }
  // Still signed out.
  await page.goto('/settings/api-keys');
  await expect(page).toHaveURL(/\/sign-in\?callbackUrl=/);
});

test('a new account starts with an empty state that invites creating the first key', async ({ page }, testInfo) => {
  await signUpVerified(page, {
    name: 'E2E Newcomer',
    email: `e2e-newcomer-${Date.now()}@example.com`,
    password: 'a-long-enough-password',
    callbackUrl: '/settings/api-keys',
  });
  await expect(page).toHaveURL(/\/settings\/api-keys$/);
  await expect(page.getByRole('heading', { name: 'No API keys yet' })).toBeVisible();
  await expect(page.getByTestId('api-key-row')).toHaveCount(0);
  await snapshot(page, testInfo, 'empty-state');
  await waitForHydration(page);
  await page.getByRole('button', { name: 'Create your first API key' }).click();
  await expect(page.getByRole('dialog', { name: 'Create API key' })).toBeVisible();
});

/** A key name unique within the run (repeats and retries share the database). */
const uniqueName = (base: string, testInfo: TestInfo) =>
  testInfo.repeatEachIndex + testInfo.retry === 0 ? base : `${base} ${testInfo.repeatEachIndex}.${testInfo.retry}`;

test('sign in, create, see once, copy, use and revoke an API key', async ({ page, request }, testInfo) => {
  const name = uniqueName('E2E key', testInfo);
  let key = '';

  await test.step('signed out, the settings page sends to sign-in and back', async () => {
    await page.goto('/settings/api-keys');
    await expect(page).toHaveURL(/\/sign-in\?callbackUrl=%2Fsettings%2Fapi-keys$/);
    await fillSignInForm(page, ALICE.email, DEMO_PASSWORD);
    await expect(page).toHaveURL(/\/settings\/api-keys$/);
    await expect(page.getByRole('heading', { name: 'API Keys', exact: true })).toBeVisible();
    await waitForHydration(page);
    await snapshot(page, testInfo, 'key-list');
  });

  await test.step('create a key with the default expiry', async () => {
    await createButton(page).click();
    const dialog = page.getByRole('dialog', { name: 'Create API key' });
    await expect(dialog).toBeVisible();
    await expect(dialog.getByLabel('Name')).toBeFocused();
    await dialog.getByLabel('Name').fill(name);
    await expect(dialog.getByLabel('Expires after')).toHaveValue('90');
    await snapshot(page, testInfo, 'create-dialog');
    await dialog.getByRole('button', { name: 'Create key' }).click();
    await expect(dialog).toBeHidden();
  });

  await test.step('the full key is shown once, with a working copy button', async () => {
    const dialog = page.getByRole('dialog', { name: 'Your new API key' });
    await expect(dialog).toBeVisible();
    await expect(dialog).toContainText('will not be shown again');
    await expect(dialog).toContainText('Use it in the X-API-Key header or as Authorization: Bearer.');
    key = ((await dialog.getByTestId('new-api-key').textContent()) ?? '').trim();
    expect(key).toMatch(KEY_PATTERN);
    await dialog.getByRole('button', { name: 'Copy' }).click();
    await expect(dialog.getByRole('status')).toHaveText('Copied to the clipboard.');
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(key);
    await snapshot(page, testInfo, 'key-shown');
    await dialog.getByRole('button', { name: 'I have saved my key' }).click();
    await expect(dialog).toBeHidden();
    await expect(keyRow(page, name)).toContainText(`cdapi_…${key.slice(-4)}`);
  });

  await test.step('after a reload only the hint exists', async () => {
    await page.reload();
    const row = keyRow(page, name);
    await expect(row).toHaveCount(1);
    await expect(row.locator('code')).toHaveText(`cdapi_…${key.slice(-4)}`);
    await expect(row).toContainText('Active');
    await expect(row).toContainText('Never'); // last used
    const html = await page.content();
    expect(html).not.toContain(key);
    expect(html).not.toContain(key.slice('cdapi_'.length, -4));
    const list = await page.request.get('/api/trpc/apiKeys.list');
    expect(list.status()).toBe(200);
    expect(await list.text()).not.toContain(key.slice('cdapi_'.length, -4));
    await waitForHydration(page);
  });

  await test.step('the key reads contracts over HTTP', async () => {
    const res = await readResponse<{ success: boolean; data: { contracts: unknown[] } }>(
      await request.get(`${API}/contracts`, { headers: { 'X-API-Key': key } }),
    );
    expect(res.status, res.text).toBe(200);
    expect(res.body.success).toBe(true);
    expect(res.body.data.contracts.length).toBeGreaterThan(0);
    // The other way the dialog names: the same key as a Bearer token.
    const bearer = await request.get(`${API}/contracts`, { headers: { Authorization: `Bearer ${key}` } });
    expect(bearer.status()).toBe(200);
    // last_used_at is written after the response, without delaying it.
    await expect
      .poll(
        async () => {
          const list = (await (await page.request.get('/api/trpc/apiKeys.list')).json()) as {
            result: { data: { name: string; lastUsedAt: string | null }[] };
          };
          return list.result.data.find((k) => k.name === name)?.lastUsedAt ?? null;
        },
        { message: 'last_used_at is recorded' },
      )
      .not.toBeNull();
  });

  await test.step('revoke it after a confirmation that names it', async () => {
    const row = keyRow(page, name);
    await row.getByRole('button', { name: `Revoke ${name}` }).click();
    const dialog = page.getByRole('dialog', { name: `Revoke “${name}”?` });
    await expect(dialog).toBeVisible();
    await expect(dialog).toContainText(`cdapi_…${key.slice(-4)}`);
    await snapshot(page, testInfo, 'revoke-confirm');
    await dialog.getByRole('button', { name: 'Revoke key' }).click();
    await expect(dialog).toBeHidden();
    await expect(row).toContainText('Revoked');
    await expect(row.getByRole('button', { name: `Revoke ${name}` })).toHaveCount(0);
    await snapshot(page, testInfo, 'revoked');
    await page.reload();
    await expect(keyRow(page, name)).toContainText('Revoked');
    await expect(keyRow(page, name).locator('td').nth(3)).not.toHaveText('Never'); // last used
  });

  await test.step('the revoked key gets 401 with the error envelope', async () => {
    const res = await readResponse<ErrorBody>(await request.get(`${API}/contracts`, { headers: { 'X-API-Key': key } }));
    expect(res.status, res.text).toBe(401);
    expect(res.body).toEqual({
      success: false,
      error: { code: 'unauthorized', message: expect.any(String), details: [] },
      request_id: res.headers['x-request-id'],
    });
    expect(res.text).not.toContain(key);
  });
});

test('the create dialog works with the keyboard alone and keeps the focus inside', async ({ page }, testInfo) => {
  const name = uniqueName('Keyboard key', testInfo);
  await signInOverHttp(page.request, ALICE.email);
  await page.goto('/settings/api-keys');
  await waitForHydration(page);

  // Open with Tab + Enter, close with Escape, open again.
  await tabTo(page, createButton(page));
  await page.keyboard.press('Enter');
  const dialog = page.getByRole('dialog', { name: 'Create API key' });
  await expect(dialog).toBeVisible();
  await page.keyboard.press('Escape');
  await expect(dialog).toBeHidden();
  await tabTo(page, createButton(page));
  await page.keyboard.press('Enter');
  await expect(dialog).toBeVisible();
  await expect(dialog.getByLabel('Name')).toBeFocused();

  // Tab and Shift+Tab cycle through the dialog and never reach the page behind it.
  const visited = new Set<string>();
  for (const key of [...Array(8).fill('Tab'), ...Array(8).fill('Shift+Tab')] as string[]) {
    await page.keyboard.press(key);
    const focus = await focusPlace(page);
    expect(focus.place, `after ${key}, focus is on ${focus.label}`).not.toBe('page');
    if (focus.place === 'dialog') visited.add(focus.label);
  }
  expect(visited.size, [...visited].join(', ')).toBeGreaterThanOrEqual(4); // name, expiry, cancel, create

  // Fill and submit with the keyboard.
  await dialog.getByLabel('Name').focus();
  await page.keyboard.press('ControlOrMeta+a');
  await page.keyboard.type(name);
  await page.keyboard.press('Tab');
  await expect(dialog.getByLabel('Expires after')).toBeFocused();
  await page.keyboard.press('ArrowUp'); // 90 days -> 30 days
  await expect(dialog.getByLabel('Expires after')).toHaveValue('30');
  await snapshot(page, testInfo, 'keyboard-create-dialog');
  // Past the owner, access, permissions and allowed addresses (issue 23), with their defaults.
  await tabTo(page, dialog.getByRole('button', { name: 'Create key' }), 10);
  await page.keyboard.press('Enter');

  const shown = page.getByRole('dialog', { name: 'Your new API key' });
  await expect(shown).toBeVisible();
  await expect(shown.getByTestId('new-api-key')).toHaveText(KEY_PATTERN);
  expect((await focusPlace(page)).place).toBe('dialog');
  await tabTo(page, shown.getByRole('button', { name: 'I have saved my key' }), 6);
  await page.keyboard.press('Enter');
  await expect(shown).toBeHidden();

  const row = keyRow(page, name);
  await expect(row).toContainText('Active');
  const list = (await (await page.request.get('/api/trpc/apiKeys.list')).json()) as {
    result: { data: { name: string; createdAt: string; expiresAt: string | null }[] };
  };
  const created = list.result.data.find((k) => k.name === name);
  expect(created?.expiresAt).toBeTruthy();
  expect(Date.parse(created!.expiresAt!) - Date.parse(created!.createdAt)).toBe(30 * 86_400_000);
});

test('closing a dialog returns the focus to the button that opened it', async ({ page }) => {
  await signInOverHttp(page.request, DEMO_USERS.carol.email);
  await page.goto('/settings/api-keys');
  await waitForHydration(page);
  await createButton(page).focus();
  await page.keyboard.press('Enter');
  const dialog = page.getByRole('dialog', { name: 'Create API key' });
  await expect(dialog).toBeVisible();
  await page.keyboard.press('Escape');
  await expect(dialog).toBeHidden();
  await expect(createButton(page)).toBeFocused({ timeout: 1_000 });
});
