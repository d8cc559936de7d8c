import { readFileSync } from 'node:fs';
import ICAL from 'ical.js';
import { expect, test, type APIRequestContext, type Browser, type Locator, type Page } from '@playwright/test';
import { DEMO_ORGS, DEMO_USERS, demoContractId } from '@/db/seed/demo';
import { API, readResponse, type ErrorBody } from './support/api';
import { snapshot } from './support/artifacts';
import { CLIENT_ADDRESS_HEADER, createButton, KEY_PATTERN, keyRow, openKeysPage, uniqueNames, waitForHydration } from './support/keys-page';
import { startOwnServer, type OwnServer } from './support/own-server';
import { createFeed, mintKey, signInOverHttp } from './support/session';

/**
 * The pages of least-privilege keys (issue 23, docs/keys.md "In the app") in Debian's
 * Chromium against the production build: the create dialog's restrictions and their
 * refusals by the API, allowed addresses (on a server of its own that knows client
 * addresses), organisation keys and the organisation's page (remove access, the policy),
 * rolling with a grace period, and the access choice of calendar feeds.
 *
 * The specs share the suite's database: every key has a name of its own, and the policy
 * test of Acme runs on a server of its own (it switches the policy off for a while).
 */

const ALICE = DEMO_USERS.alice;
const BOB = DEMO_USERS.bob;
const ACME = DEMO_ORGS.acme;
const GLOBEX = DEMO_ORGS.globex;
// The own server's port: next to the suite's (E2E_PORT + 110 by default; dev-outbox.spec.ts has + 100).
const OWN_PORT = Number(process.env.E2E_OWN_PORT ?? Number(process.env.E2E_PORT ?? 3210) + 110);

const unique = uniqueNames();


/** Fills the name of the open create dialog and returns the dialog. */
async function openCreateDialog(page: Page, name: string): Promise<Locator> {
  await createButton(page).click();
  const dialog = page.getByRole('dialog', { name: 'Create API key' });
  await expect(dialog).toBeVisible();
  await dialog.getByLabel('Name').fill(name);
  return dialog;
}

/** Reads the shown-once secret and closes its dialog. */
async function takeSecret(page: Page, title = 'Your new API key'): Promise<string> {
  const shown = page.getByRole('dialog', { name: title });
  await expect(shown).toBeVisible();
  const key = ((await shown.getByTestId('new-api-key').textContent()) ?? '').trim();
  expect(key).toMatch(KEY_PATTERN);
  await shown.getByRole('button', { name: 'I have saved my key' }).click();
  await expect(shown).toBeHidden();
  return key;
}

interface ContractList {
  data: { contracts: { id: string; organization_id: string | null }[] };
}

async function listContracts(request: APIRequestContext, key: string, query = '') {
  return readResponse<ContractList & ErrorBody>(await request.get(`${API}/contracts?limit=100${query}`, { headers: { 'X-API-Key': key } }));
}

async function getContract(request: APIRequestContext, key: string, demoKey: string): Promise<number> {
  return (await request.get(`${API}/contracts/${demoContractId(demoKey)}`, { headers: { 'X-API-Key': key } })).status();
}

test('a restricted key made in the dialog: the server judges the addresses next to the field, the API refuses what the key may not do', async ({ page, request }, testInfo) => {
  const name = unique('Globex reader');
  await signInOverHttp(page.request, BOB.email);
  await openKeysPage(page);
  const dialog = await openCreateDialog(page, name);

  await test.step('the choices are labelled groups; bob may choose Globex (his) as the owner', async () => {
    await expect(dialog.getByLabel('Owner')).toHaveValue('me');
    await expect(dialog.getByLabel('Owner').locator('option')).toHaveText(['Me (a personal key)', 'Globex (an organisation key)']);
    const access = dialog.getByRole('group', { name: 'What it may read' });
    await expect(access.getByRole('radio', { name: /Everything I can see/ })).toBeChecked();
    await access.getByRole('radio', { name: 'Only what I choose' }).check();
    await expect(access.getByRole('checkbox', { name: 'My personal contracts' })).toBeChecked();
    await access.getByRole('checkbox', { name: 'My personal contracts' }).uncheck();
    await access.getByRole('checkbox', { name: 'Globex' }).check();
    await expect(access.getByRole('checkbox', { name: 'Acme Corp' })).not.toBeChecked();
    const permissions = dialog.getByRole('group', { name: 'Permissions' });
    await permissions.getByRole('checkbox', { name: /contracts:export/ }).uncheck();
    await expect(permissions.getByRole('checkbox', { name: /contracts:read/ })).toBeChecked();
  });

  const addresses = dialog.getByLabel('Allowed addresses (optional)');
  await test.step('a malformed address: the server says why, next to the field, which gets the focus', async () => {
    await addresses.fill('203.0.113.7\nnot-an-address');
    await dialog.getByRole('button', { name: 'Create key' }).click();
    const error = dialog.getByRole('alert');
    await expect(error).toHaveText(/"not-an-address" is not an IPv4 or IPv6 address or CIDR range/);
    await expect(addresses).toBeFocused();
    await expect(addresses).toHaveAttribute('aria-invalid', 'true');
    expect(await addresses.getAttribute('aria-describedby')).toContain(await error.getAttribute('id'));
    await snapshot(page, testInfo, 'create-dialog-address-error');
  });

  await test.step('well-formed addresses on a deployment that cannot know the client address: refused, with the reason', async () => {
    await addresses.fill('203.0.113.7');
    await expect(dialog.getByRole('alert')).toHaveCount(0);
    await dialog.getByRole('button', { name: 'Create key' }).click();
    await expect(dialog.getByRole('alert')).toContainText('cannot apply on this deployment');
    await expect(addresses).toBeFocused();
  });

  let key = '';
  await test.step('without addresses the key is created and shown once', async () => {
    await addresses.fill('');
    await dialog.getByRole('button', { name: 'Create key' }).click();
    await expect(dialog).toBeHidden();
    key = await takeSecret(page);
    await expect(keyRow(page, name).getByTestId('key-restrictions')).toHaveText('access: Globex · read · from any address');
    await snapshot(page, testInfo, 'restricted-key-listed');
  });

  await test.step('it reads Globex only: other contracts are 404, export is 403 insufficient_scope', async () => {
    const list = await listContracts(request, key);
    expect(list.status, list.text).toBe(200);
    expect(list.body.data.contracts.length).toBeGreaterThan(0);
    expect(new Set(list.body.data.contracts.map((c) => c.organization_id))).toEqual(new Set([GLOBEX.id]));
    expect(await getContract(request, key, 'globex-1')).toBe(200);
    expect(await getContract(request, key, 'bob-1')).toBe(404);
    expect(await getContract(request, key, 'acme-2')).toBe(404);
    const exported = await readResponse<ErrorBody>(
      await request.post(`${API}/contracts/export`, { headers: { 'X-API-Key': key }, data: {} }),
    );
    expect(exported.status, exported.text).toBe(403);
    expect(exported.body.error.code).toBe('insufficient_scope');
    expect(exported.body.error.message).toContain('contracts:export');
    expect(exported.headers['www-authenticate']).toBe('Bearer error="insufficient_scope", scope="contracts:export"');
  });

  await test.step('edit: adding the export permission applies from the next request', async () => {
    await keyRow(page, name).getByRole('button', { name: `Edit ${name}` }).click();
    const edit = page.getByRole('dialog', { name: `Edit restrictions of “${name}”` });
    await expect(edit.getByRole('checkbox', { name: 'Globex' })).toBeChecked();
    await edit.getByRole('checkbox', { name: /contracts:export/ }).check();
    await edit.getByRole('button', { name: 'Save restrictions' }).click();
    await expect(edit).toBeHidden();
    await expect(keyRow(page, name).getByTestId('key-restrictions')).toHaveText('access: Globex · read, export · from any address');
    const exported = await request.post(`${API}/contracts/export`, { headers: { 'X-API-Key': key }, data: {} });
    expect(exported.status()).toBe(200);
    expect(await exported.text()).not.toContain('Office Lease');
  });
});

test('roll with a grace period: both secrets work, then a roll "now" leaves only the newest', async ({ page, request }, testInfo) => {
  const name = unique('Rolled key');
  await signInOverHttp(page.request, BOB.email);
  await openKeysPage(page);
  const dialog = await openCreateDialog(page, name);
  await dialog.getByRole('button', { name: 'Create key' }).click();
  const first = await takeSecret(page);

  const roll = async (grace: string): Promise<string> => {
    await keyRow(page, name).getByRole('button', { name: `Roll ${name}` }).click();
    const rollDialog = page.getByRole('dialog', { name: `Roll “${name}”?` });
    const choices = rollDialog.getByRole('group', { name: 'The old secret stops working' });
    await expect(choices.getByRole('radio')).toHaveCount(4);
    await choices.getByRole('radio', { name: grace }).check();
    await expect(choices.getByRole('radio', { name: grace })).toBeFocused();
    await snapshot(page, testInfo, `roll-${grace}`);
    await rollDialog.getByRole('button', { name: 'Roll key' }).click();
    const shown = page.getByRole('dialog', { name: 'The new secret of your key' });
    await expect(shown).toContainText(grace === 'Now' ? 'The old one no longer works.' : 'The old one keeps working until');
    return takeSecret(page, 'The new secret of your key');
  };

  const second = await roll('In 1 hour');
  expect(second).not.toBe(first);
  await expect(keyRow(page, name).getByTestId('key-restrictions')).toContainText('Previous secret works until');
  for (const key of [first, second]) expect((await listContracts(request, key)).status).toBe(200);

  const third = await roll('Now');
  expect((await listContracts(request, third)).status).toBe(200);
  for (const key of [first, second]) {
    await expect.poll(async () => (await listContracts(request, key)).status, { message: 'an old secret after a roll "now"' }).toBe(401);
  }
  // Same key: one row, same name.
  await expect(keyRow(page, name)).toHaveCount(1);
});

test('an organisation key: made by an owner, listed on the organisation page, unseen by members', async ({ page, browser, request }, testInfo) => {
  const name = unique('Acme ETL');
  await signInOverHttp(page.request, ALICE.email);
  await openKeysPage(page);
  const dialog = await openCreateDialog(page, name);
  await dialog.getByLabel('Owner').selectOption({ label: 'Acme Corp (an organisation key)' });
  await expect(dialog.getByRole('group', { name: 'What it may read' })).toHaveCount(0);
  await expect(dialog).toContainText('It reads Acme Corp’s contracts only.');
  await dialog.getByRole('button', { name: 'Create key' }).click();
  await expect(page.getByRole('dialog', { name: 'Your new API key' })).toContainText('listed on the organisation’s page');
  const key = await takeSecret(page);
  // Not one of alice's personal keys.
  await expect(keyRow(page, name)).toHaveCount(0);

  const list = await listContracts(request, key);
  expect(list.status, list.text).toBe(200);
  expect(new Set(list.body.data.contracts.map((c) => c.organization_id))).toEqual(new Set([ACME.id]));

  await page.getByRole('navigation', { name: 'Settings' }).getByRole('link', { name: 'Organisation: Acme Corp' }).click();
  await expect(page).toHaveURL(`/settings/organizations/${ACME.id}`);
  const row = page.getByTestId('organization-key-row').filter({ hasText: name });
  await expect(row).toHaveCount(1);
  await expect(row.locator('td[data-label="Created by"]')).toHaveText(ALICE.email);
  await expect(row.locator('td[data-label="Permissions"]')).toHaveText('read, export');
  await expect(row.locator('td[data-label="Allowed addresses"]')).toHaveText('any address');
  await snapshot(page, testInfo, 'organization-page');

  await test.step('bob, a member of Acme, has no page, no link and no view of the key', async () => {
    const bob = await browser.newContext();
    const bobPage = await bob.newPage();
    await signInOverHttp(bobPage.request, BOB.email);
    const res = await bobPage.goto(`/settings/organizations/${ACME.id}`);
    expect(res?.status()).toBe(404);
    await expect(bobPage.locator('body')).not.toContainText(name);
    await bobPage.goto('/settings/api-keys');
    const nav = bobPage.getByRole('navigation', { name: 'Settings' });
    await expect(nav.getByRole('link', { name: 'Organisation: Globex' })).toBeVisible();
    await expect(nav.getByRole('link', { name: 'Organisation: Acme Corp' })).toHaveCount(0);
    await expect(bobPage.locator('body')).not.toContainText(name);
    const trpc = await bobPage.request.get(`/api/trpc/organizationKeys.list?input=${encodeURIComponent(JSON.stringify({ organizationId: ACME.id }))}`);
    expect(trpc.status()).toBe(403);
    expect(await trpc.text()).not.toContain(name);
    await bob.close();
  });

  await test.step('alice revokes it on the organisation page', async () => {
    await row.getByRole('button', { name: `Revoke ${name}` }).click();
    const confirm = page.getByRole('dialog', { name: `Revoke “${name}”?` });
    await expect(confirm.getByRole('button', { name: 'Cancel' })).toBeFocused();
    await confirm.getByRole('button', { name: 'Revoke key' }).click();
    await expect(row).toContainText('Revoked');
    await expect.poll(async () => (await listContracts(request, key)).status).toBe(401);
  });
});

async function bobsKeyAndPage(browser: Browser, name: string, baseURL?: string): Promise<{ page: Page; key: string; close: () => Promise<void> }> {
  const context = await browser.newContext(baseURL ? { baseURL } : {});
  const page = await context.newPage();
  await signInOverHttp(page.request, BOB.email);
  const key = (await mintKey(page.request, name)).key;
  return { page, key, close: () => context.close() };
}

test("remove access: a member's key stops reading the organisation, and the member's page says why", async ({ page, browser, request }, testInfo) => {
  const name = unique("Bob's everything key");
  const bob = await bobsKeyAndPage(browser, name);
  expect(await getContract(request, bob.key, 'acme-1')).toBe(200);

  await signInOverHttp(page.request, ALICE.email);
  await page.goto(`/settings/organizations/${ACME.id}`);
  const row = page.getByTestId('member-key-row').filter({ hasText: name });
  await expect(row.locator('td[data-label="Owner"]')).toHaveText(`${BOB.name} (${BOB.email})`);
  await waitForHydration(row.getByRole('button', { name: /Remove access/ }));
  await row.getByRole('button', { name: `Remove access of ${name} (${BOB.email})` }).click();
  const confirm = page.getByRole('dialog', { name: `Remove Acme Corp's access from “${name}”?` });
  await expect(confirm.getByRole('button', { name: 'Cancel' })).toBeFocused();
  await snapshot(page, testInfo, 'remove-access-confirm');
  await confirm.getByRole('button', { name: 'Remove access' }).click();
  await expect(confirm).toBeHidden();
  await expect(row).toHaveCount(0);

  await expect.poll(() => getContract(request, bob.key, 'acme-1'), { message: 'an Acme contract after remove access' }).toBe(404);
  expect(await getContract(request, bob.key, 'bob-1')).toBe(200);
  expect(await getContract(request, bob.key, 'globex-1')).toBe(200);

  await bob.page.goto('/settings/api-keys');
  await expect(keyRow(bob.page, name).getByTestId('key-removed-from')).toContainText(`Acme Corp removed its access (${ALICE.email})`);
  await snapshot(bob.page, testInfo, 'member-sees-why');
  await bob.close();

  await test.step("the organisation's security log has the removal, and downloads as CSV", async () => {
    await page.reload();
    const log = page.getByRole('region', { name: 'Security log' });
    const removal = log.getByTestId('security-event').filter({ hasText: name });
    await expect(removal.first()).toContainText("An admin removed a key's access");
    await expect(removal.first()).toContainText(ALICE.email);
    const download = page.waitForEvent('download');
    await log.getByRole('link', { name: 'Download CSV' }).click();
    const file = await download;
    expect(file.suggestedFilename()).toMatch(/^security-log-\d{4}-\d{2}-\d{2}\.csv$/);
    const csv = readFileSync((await file.path())!, 'utf8');
    expect(csv).toContain('api_key.access_removed');
    expect(csv).toContain(name);
    await snapshot(page, testInfo, 'organization-security-log');
  });
});

test('calendar feeds: the access choice at creation, shown in the list, and changed', async ({ page }) => {
  const name = unique('Personal feed');
  await signInOverHttp(page.request, BOB.email);
  await page.goto('/settings/calendar');
  const create = page.getByRole('button', { name: 'Create calendar feed', exact: true });
  await waitForHydration(create);
  await create.click();
  const dialog = page.getByRole('dialog', { name: 'Create calendar feed' });
  await dialog.getByLabel('Name').fill(name);
  const access = dialog.getByRole('group', { name: 'Contracts in the feed' });
  await access.getByRole('radio', { name: 'Only what I choose' }).check();
  await access.getByRole('checkbox', { name: 'My personal contracts' }).uncheck();
  await dialog.getByRole('button', { name: 'Create feed' }).click();
  // Nothing chosen: said next to the choice, which gets the focus.
  await expect(dialog.getByRole('alert')).toContainText('Choose what it may read');
  await expect(access.getByRole('radio', { name: /Everything I can see/ })).toBeFocused();
  await access.getByRole('checkbox', { name: 'Globex' }).check();
  await dialog.getByRole('button', { name: 'Create feed' }).click();
  await page.getByRole('dialog', { name: 'Your new calendar feed' }).getByRole('button', { name: 'I have saved the address' }).click();
  const row = page.getByTestId('calendar-feed-row').filter({ has: page.getByRole('cell', { name, exact: true }) });
  await expect(row.getByTestId('feed-access')).toHaveText('Reads: Globex');
  await row.getByRole('button', { name: `Change access ${name}` }).click();
  const change = page.getByRole('dialog', { name: `What “${name}” reads` });
  await change.getByRole('radio', { name: /Everything I can see/ }).check();
  await change.getByRole('button', { name: 'Save access' }).click();
  await expect(change).toBeHidden();
  await expect(row.getByTestId('feed-access')).toHaveText('Reads: Everything');
});

test.describe('at 390 px wide', () => {
  test.use({ viewport: { width: 390, height: 844 }, hasTouch: true, isMobile: true, deviceScaleFactor: 2 });

  test('the keys page with its dialog and the organisation page do not scroll sideways', async ({ page }, testInfo) => {
    await signInOverHttp(page.request, BOB.email);
    await mintKey(page.request, unique('Phone key with a rather long name to fill its card'));
    const width = () => page.evaluate(() => document.documentElement.scrollWidth);
    await openKeysPage(page);
    expect(await width()).toBeLessThanOrEqual(390);
    const dialog = await openCreateDialog(page, 'Phone');
    await dialog.getByRole('radio', { name: 'Only what I choose' }).check();
    await snapshot(page, testInfo, 'phone-create-dialog');
    const box = await dialog.boundingBox();
    expect(box!.x).toBeGreaterThanOrEqual(0);
    expect(box!.x + box!.width).toBeLessThanOrEqual(390);
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await page.goto(`/settings/organizations/${GLOBEX.id}`);
    await expect(page.getByRole('heading', { name: 'Globex', level: 2 })).toBeVisible();
    await snapshot(page, testInfo, 'phone-organization-page');
    expect(await width()).toBeLessThanOrEqual(390);
  });
});

// On a server of its own: the policy test switches Acme's policy off for a while, which
// would hide Acme from bob's keys in the specs running beside it on the suite's server.
test.describe('on a server of its own (knows client addresses; its own Acme policy)', () => {
  let own: OwnServer;
  test.beforeAll(async ({ playwright }) => {
    test.setTimeout(240_000);
    own = await startOwnServer(OWN_PORT, { CLIENT_ADDRESS_HEADER, RATE_LIMIT_GENERAL_PER_WINDOW: '100000' });
    // A fresh server's first sign-in and first page take long on a busy machine: not the test's subject.
    const warm = await playwright.request.newContext({ baseURL: own.base, timeout: 120_000 });
    await signInOverHttp(warm, BOB.email);
    expect((await warm.get('/settings/api-keys')).status()).toBe(200);
    await warm.dispose();
  });
  test.afterAll(() => own?.stop());

  test("the policy off: members' personal keys and feeds leave the organisation out until it is on again", async ({ browser, playwright }, testInfo) => {
    const name = unique("Bob's key under the policy");
    const bob = await bobsKeyAndPage(browser, name, own.base);
    const request = await playwright.request.newContext({ baseURL: own.base });
    const aliceContext = await browser.newContext({ baseURL: own.base });
    const page = await aliceContext.newPage();
    const feed = await createFeed(bob.page.request, unique("Bob's feed under the policy"));
    const feedSummaries = async () => {
      const res = await request.get(`${API}/calendar/${feed.token}.ics`);
      expect(res.status()).toBe(200);
      return new ICAL.Component(ICAL.parse(await res.text())).getAllSubcomponents('vevent').map((v) => new ICAL.Event(v).summary);
    };
    expect(await getContract(request, bob.key, 'acme-1')).toBe(200);
    expect((await feedSummaries()).some((s) => s.includes('Salesforce Enterprise Subscription'))).toBe(true);

    await signInOverHttp(page.request, ALICE.email);
    await page.goto(`/settings/organizations/${ACME.id}`);
    const policy = page.getByRole('checkbox', { name: "Members’ personal keys may read this organisation’s contracts" });
    await waitForHydration(policy);
    await expect(policy).toBeChecked();
    await expect(page.getByTestId('member-key-row').filter({ hasText: name })).toHaveCount(1);
    try {
      await policy.uncheck();
      await expect(page.getByRole('status').filter({ hasText: 'Saved' })).toHaveText("Saved: only the organisation's own keys read its contracts.");
      await expect(page.getByTestId('member-key-row')).toHaveCount(0);
      await snapshot(page, testInfo, 'policy-off');

      await expect.poll(() => getContract(request, bob.key, 'acme-1'), { message: 'an Acme contract with the policy off' }).toBe(404);
      expect(await getContract(request, bob.key, 'bob-1')).toBe(200);
      expect(await getContract(request, bob.key, 'globex-1')).toBe(200);
      expect((await feedSummaries()).some((s) => s.includes('Salesforce Enterprise Subscription'))).toBe(false);
    } finally {
      await page.reload();
      await waitForHydration(policy);
      if (!(await policy.isChecked())) await policy.check();
      await expect(policy).toBeChecked();
    }
    await expect.poll(() => getContract(request, bob.key, 'acme-1'), { message: 'with the policy on again' }).toBe(200);
    await bob.close();
    await aliceContext.close();
    await request.dispose();
  });

  test('a key allowed one range answers from it and refuses elsewhere with 403 ip_not_allowed', async ({ browser, playwright }, testInfo) => {
    const context = await browser.newContext({ baseURL: own.base, extraHTTPHeaders: { [CLIENT_ADDRESS_HEADER]: '203.0.113.9' } });
    const page = await context.newPage();
    await signInOverHttp(page.request, BOB.email);
    await openKeysPage(page);
    const name = unique('Office only');
    const dialog = await openCreateDialog(page, name);
    await dialog.getByLabel('Allowed addresses (optional)').fill('203.0.113.0/24\n2001:db8::/32');
    await dialog.getByRole('button', { name: 'Create key' }).click();
    const key = await takeSecret(page);
    await expect(keyRow(page, name).getByTestId('key-restrictions')).toHaveText('access: everything · read, export · from 203.0.113.0/24, 2001:db8::/32');
    await snapshot(page, testInfo, 'allowed-addresses-listed');

    const api = await playwright.request.newContext({ baseURL: own.base });
    const from = (address: string) => api.get(`${API}/contracts`, { headers: { 'X-API-Key': key, [CLIENT_ADDRESS_HEADER]: address } });
    expect((await from('203.0.113.200')).status()).toBe(200);
    expect((await from('2001:db8::5')).status()).toBe(200);
    const refused = await readResponse<ErrorBody>(await from('198.51.100.4'));
    expect(refused.status, refused.text).toBe(403);
    expect(refused.body.error.code).toBe('ip_not_allowed');
    expect(refused.body.error.message).toContain('198.51.100.4');
    expect(refused.text).not.toContain(key);
    await api.dispose();
    await context.close();
  });
});
