import { expect, test, type APIRequestContext, type Locator, type Page } from '@playwright/test';
import { DEMO_ORGS, DEMO_USERS } from '@/db/seed/demo';
import { API, readResponse, type ErrorBody } from './support/api';
import { snapshot } from './support/artifacts';
import { CLIENT_ADDRESS_HEADER, createButton, KEY_PATTERN, keyRow, openKeysPage, uniqueNames, waitForHydration } from './support/keys-page';
import { startOwnServer, type OwnServer } from './support/own-server';
import { mintKey, signInOverHttp } from './support/session';

/**
 * More of the pages of least-privilege keys (issue 23, docs/keys.md "In the app") in
 * Debian's Chromium against the production build, next to e2e/keys-ui.spec.ts: the Edit
 * dialog of a personal key (a refusal shown next to its field changes nothing; a valid
 * edit applies), "Change access" of a webhook endpoint, rolling and editing an
 * organisation's key on its page (on a server of its own that knows client addresses,
 * so that allowed addresses apply), and the create dialog with the keyboard alone and as
 * a screen reader reads it.
 *
 * The specs share the suite's database: every key and endpoint has a name of its own.
 */

const ALICE = DEMO_USERS.alice;
const BOB = DEMO_USERS.bob;
const GLOBEX = DEMO_ORGS.globex;
// The own server's port: next to the suite's (E2E_PORT + 120; keys-ui.spec.ts has + 110).
const OWN_PORT = Number(process.env.E2E_OWN_PORT_MORE ?? Number(process.env.E2E_PORT ?? 3210) + 120);
const EXPORT_SCOPE_CHALLENGE = 'Bearer error="insufficient_scope", scope="contracts:export"';

const unique = uniqueNames();


interface TokenState {
  id: string;
  name: string;
  access: { kind: string; personal?: boolean; organizationIds?: string[] };
  permissions: string[];
  allowedAddresses: string[];
}

/** A tRPC query of the signed-in session (`input` left out for procedures without one). */
async function trpcQuery<T>(api: APIRequestContext, procedure: string, input?: unknown): Promise<T> {
  const query = input === undefined ? '' : `?input=${encodeURIComponent(JSON.stringify(input))}`;
  const res = await api.get(`/api/trpc/${procedure}${query}`);
  const text = await res.text();
  expect(res.status(), `${procedure}: ${text}`).toBe(200);
  return (JSON.parse(text) as { result: { data: T } }).result.data;
}

async function trpcMutation<T>(api: APIRequestContext, procedure: string, input: unknown): Promise<T> {
  const res = await api.post(`/api/trpc/${procedure}`, { data: input });
  const text = await res.text();
  expect(res.status(), `${procedure}: ${text}`).toBe(200);
  return (JSON.parse(text) as { result: { data: T } }).result.data;
}

/** GET /contracts and POST /contracts/export with `key` (from `address` on a server that reads it from a header). */
function callsWith(request: APIRequestContext, key: string, address?: string) {
  const headers = { 'X-API-Key': key, ...(address ? { [CLIENT_ADDRESS_HEADER]: address } : {}) };
  return {
    list: async () => readResponse<ErrorBody>(await request.get(`${API}/contracts?limit=5`, { headers })),
    export: async () => readResponse<ErrorBody>(await request.post(`${API}/contracts/export`, { headers, data: {} })),
  };
}

/** The export refused for want of contracts:export, as RFC 6750 says. */
function expectInsufficientScope(res: Awaited<ReturnType<ReturnType<typeof callsWith>['export']>>): void {
  expect(res.status, res.text).toBe(403);
  expect(res.body.error.code).toBe('insufficient_scope');
  expect(res.body.error.message).toContain('contracts:export');
  expect(res.headers['www-authenticate']).toBe(EXPORT_SCOPE_CHALLENGE);
}

test('edit a personal key: a refused change is shown next to its field and changes nothing; a valid one applies at once', async ({ page, request }, testInfo) => {
  const name = unique('Edited key');
  await signInOverHttp(page.request, ALICE.email);
  const minted = await mintKey(page.request, name);
  const api = callsWith(request, minted.key);
  expect((await api.export()).status).toBe(200);

  await openKeysPage(page);
  const row = keyRow(page, name);
  await expect(row.getByTestId('key-restrictions')).toHaveText('access: everything · read, export · from any address');
  await row.getByRole('button', { name: `Edit ${name}` }).click();
  const edit = page.getByRole('dialog', { name: `Edit restrictions of “${name}”` });
  await expect(edit).toBeVisible();
  const addresses = edit.getByLabel('Allowed addresses (optional)');
  const exportPermission = edit.getByRole('group', { name: 'Permissions' }).getByRole('checkbox', { name: /contracts:export/ });

  await test.step('the dialog shows the key as it is', async () => {
    await expect(edit.getByRole('group', { name: 'What it may read' }).getByRole('radio', { name: /Everything I can see/ })).toBeChecked();
    await expect(edit.getByRole('checkbox', { name: /contracts:read/ })).toBeChecked();
    await expect(exportPermission).toBeChecked();
    await expect(addresses).toHaveValue('');
  });

  /** The error next to the addresses: announced, tied to the field, which has the focus. */
  const expectAddressError = async (text: string | RegExp) => {
    const error = edit.getByRole('alert');
    await expect(error).toHaveCount(1);
    await expect(error).toHaveText(text);
    await expect(addresses).toBeFocused();
    await expect(addresses).toHaveAttribute('aria-invalid', 'true');
    const describedBy = (await addresses.getAttribute('aria-describedby'))?.split(/\s+/) ?? [];
    expect(describedBy).toContain(await error.getAttribute('id'));
    await expect(edit).toBeVisible();
  };

  await test.step('more than 20 entries: said by the dialog itself, next to the field', async () => {
    await addresses.fill(Array.from({ length: 21 }, (_, i) => `198.51.100.${i + 1}`).join('\n'));
    await exportPermission.uncheck();
    await edit.getByRole('button', { name: 'Save restrictions' }).click();
    await expectAddressError('At most 20 addresses or ranges (21 entered).');
  });

  await test.step('an entry the server refuses: its reason next to the field', async () => {
    await addresses.fill('203.0.113.7\n203.0.113.300/24');
    // Typing clears the earlier complaint.
    await expect(edit.getByRole('alert')).toHaveCount(0);
    await edit.getByRole('button', { name: 'Save restrictions' }).click();
    await expectAddressError(/"203\.0\.113\.300\/24" is not an IPv4 or IPv6 address or CIDR range/);
    await snapshot(page, testInfo, 'edit-dialog-address-error');
  });

  await test.step('nothing changed: the list, the stored key and the API are as before', async () => {
    await expect(row.getByTestId('key-restrictions')).toHaveText('access: everything · read, export · from any address');
    const stored = (await trpcQuery<TokenState[]>(page.request, 'apiKeys.list')).find((k) => k.id === minted.id);
    expect(stored).toMatchObject({ access: { kind: 'all' }, permissions: ['contracts:read', 'contracts:export'], allowedAddresses: [] });
    expect((await api.list()).status).toBe(200);
    const exported = await api.export();
    expect(exported.status, exported.text).toBe(200);
    expect(exported.headers['content-type']).toMatch(/^text\/csv/);
  });

  await test.step('a valid edit (read only, any address) closes the dialog, shows in the list and applies to the next request', async () => {
    await addresses.fill('');
    await expect(exportPermission).not.toBeChecked();
    await edit.getByRole('button', { name: 'Save restrictions' }).click();
    await expect(edit).toBeHidden();
    await expect(row.getByTestId('key-restrictions')).toHaveText('access: everything · read · from any address');
    await snapshot(page, testInfo, 'edited-key-listed');
    expect((await api.list()).status).toBe(200);
    expectInsufficientScope(await api.export());
    // The same after a reload: stored, not only shown.
    await page.reload();
    await expect(keyRow(page, name).getByTestId('key-restrictions')).toHaveText('access: everything · read · from any address');
  });
});

test("webhook endpoint: Change access from everything to personal only, kept after a reload, then to an organisation", async ({ page }, testInfo) => {
  // Nothing listens there: the test changes what the endpoint hears of, not a delivery.
  const url = `http://127.0.0.1:9/keys-ui-more/${encodeURIComponent(unique('hook'))}`;
  await signInOverHttp(page.request, BOB.email);
  const created = await trpcMutation<{ endpoint: { id: string } }>(page.request, 'webhooks.create', { url, eventTypes: ['contract.created'] });
  const storedAccess = async () => (await trpcQuery<{ id: string; access: TokenState['access'] }[]>(page.request, 'webhooks.list')).find((e) => e.id === created.endpoint.id)?.access;

  try {
    await page.goto('/settings/webhooks');
    const endpoint = page.getByRole('region', { name: url });
    const changeAccess = endpoint.getByRole('button', { name: `Change access of ${url}` });
    await waitForHydration(changeAccess);
    await expect(endpoint.getByTestId('endpoint-access')).toHaveText('Contracts: Everything');

    const dialog = page.getByRole('dialog', { name: 'Contracts this endpoint hears of' });
    await test.step('everything → my personal contracts only', async () => {
      await changeAccess.click();
      const access = dialog.getByRole('group', { name: 'What it may read' });
      await expect(access.getByRole('radio', { name: /Everything I can see/ })).toBeChecked();
      await access.getByRole('radio', { name: 'Only what I choose' }).check();
      const chosen = access.getByRole('group', { name: 'Contracts it may read' });
      await expect(chosen.getByRole('checkbox', { name: 'My personal contracts' })).toBeChecked();
      await expect(chosen.getByRole('checkbox', { name: 'Acme Corp' })).not.toBeChecked();
      await expect(chosen.getByRole('checkbox', { name: 'Globex' })).not.toBeChecked();
      await snapshot(page, testInfo, 'endpoint-change-access');
      await dialog.getByRole('button', { name: 'Save access' }).click();
      await expect(dialog).toBeHidden();
      await expect(endpoint.getByTestId('endpoint-access')).toHaveText('Contracts: Personal');
    });

    await test.step('kept: after a reload the list and the stored endpoint say personal only', async () => {
      await page.reload();
      await waitForHydration(changeAccess);
      await expect(endpoint.getByTestId('endpoint-access')).toHaveText('Contracts: Personal');
      expect(await storedAccess()).toEqual({ kind: 'chosen', personal: true, organizationIds: [] });
    });

    await test.step('the dialog opens on the stored choice; personal → Globex only', async () => {
      await changeAccess.click();
      const chosen = dialog.getByRole('group', { name: 'Contracts it may read' });
      await expect(dialog.getByRole('radio', { name: 'Only what I choose' })).toBeChecked();
      await expect(chosen.getByRole('checkbox', { name: 'My personal contracts' })).toBeChecked();
      await chosen.getByRole('checkbox', { name: 'My personal contracts' }).uncheck();
      await chosen.getByRole('checkbox', { name: 'Globex' }).check();
      await dialog.getByRole('button', { name: 'Save access' }).click();
      await expect(dialog).toBeHidden();
      await expect(endpoint.getByTestId('endpoint-access')).toHaveText('Contracts: Globex');
      expect(await storedAccess()).toEqual({ kind: 'chosen', personal: false, organizationIds: [GLOBEX.id] });
      await snapshot(page, testInfo, 'endpoint-access-changed');
    });
  } finally {
    await trpcMutation(page.request, 'webhooks.delete', { id: created.endpoint.id });
  }
});

/** Where keyboard focus is: inside `dialog`, on the page behind it, or nowhere (the body: on its way to the browser's own controls). */
async function focusPlace(page: Page, dialog: Locator): Promise<{ place: 'dialog' | 'page' | 'none'; label: string }> {
  const inside = await dialog.evaluate((el) => el.contains(document.activeElement));
  return page.evaluate((inDialog) => {
    const active = document.activeElement;
    const label = active ? `${active.tagName.toLowerCase()} ${(active.getAttribute('aria-label') ?? active.textContent ?? '').trim().slice(0, 40)}` : 'none';
    if (!active || active === document.body || active === document.documentElement) return { place: 'none' as const, label };
    return { place: inDialog ? ('dialog' as const) : ('page' as const), label };
  }, inside);
}

/** Presses `key` and expects `target` to have the focus afterwards. */
async function press(page: Page, key: string, target: Locator): Promise<void> {
  await page.keyboard.press(key);
  await expect(target, `after ${key}`).toBeFocused();
}

/** Presses Tab until `target` has the focus (keyboard only), failing after `max` presses. */
async function tabTo(page: Page, target: Locator, max = 40): Promise<void> {
  for (let i = 0; i < max; i++) {
    await page.keyboard.press('Tab');
    if (await target.evaluate((el) => el === document.activeElement)) return;
  }
  throw new Error(`Tab never reached ${target}`);
}

/** Roles of an ARIA snapshot that a user operates or that group others: each needs a name. */
const NAMED_ROLES = ['button', 'checkbox', 'combobox', 'group', 'link', 'listbox', 'radio', 'spinbutton', 'textbox'];

test('the create dialog with the keyboard alone and a screen reader: named controls and groups, focus kept and returned', async ({ page, request }, testInfo) => {
  // A long walk through the dialog by keyboard: 13 s on a quiet machine, near the default 30 s on a busy one.
  test.setTimeout(90_000);
  const name = unique('Keyboard Globex reader');
  await signInOverHttp(page.request, BOB.email);
  await openKeysPage(page);
  const dialog = page.getByRole('dialog', { name: 'Create API key' });
  const access = dialog.getByRole('group', { name: 'What it may read' });
  const chosen = access.getByRole('group', { name: 'Contracts it may read' });
  const permissions = dialog.getByRole('group', { name: 'Permissions' });
  const nameField = dialog.getByRole('textbox', { name: 'Name' });

  await test.step('opened with Tab and Enter, the focus is in the name field; Escape gives it back to the button', async () => {
    await tabTo(page, createButton(page));
    await page.keyboard.press('Enter');
    await expect(dialog).toBeVisible();
    await expect(nameField).toBeFocused();
    await page.keyboard.press('Escape');
    await expect(dialog).toBeHidden();
    await expect(createButton(page)).toBeFocused();
    await page.keyboard.press('Enter');
    await expect(dialog).toBeVisible();
    await expect(nameField).toBeFocused();
  });

  await test.step('submitted with no name: said and announced next to the name field, which gets the focus', async () => {
    await tabTo(page, dialog.getByRole('button', { name: 'Create key' }), 20);
    await page.keyboard.press('Enter');
    const error = dialog.getByRole('alert');
    await expect(error).toHaveText('Enter a name.');
    await expect(nameField).toBeFocused();
    await expect(nameField).toHaveAttribute('aria-invalid', 'true');
    expect((await nameField.getAttribute('aria-describedby'))?.split(/\s+/)).toContain(await error.getAttribute('id'));
  });

  await test.step('the choices, with keys a user presses', async () => {
    await page.keyboard.type(name);
    await expect(dialog.getByRole('alert')).toHaveCount(0);
    await press(page, 'Tab', dialog.getByRole('combobox', { name: 'Expires after' }));
    await page.keyboard.press('ArrowDown'); // 90 days -> 1 year
    await expect(dialog.getByRole('combobox', { name: 'Expires after' })).toHaveValue('365');
    await press(page, 'Tab', dialog.getByRole('combobox', { name: 'Owner' }));
    // Tab reaches the checked radio of the group; the arrow keys move the choice.
    await press(page, 'Tab', access.getByRole('radio', { name: /Everything I can see/ }));
    await press(page, 'ArrowDown', access.getByRole('radio', { name: 'Only what I choose' }));
    await expect(access.getByRole('radio', { name: 'Only what I choose' })).toBeChecked();
    await press(page, 'Tab', chosen.getByRole('checkbox', { name: 'My personal contracts' }));
    await expect(chosen.getByRole('checkbox', { name: 'My personal contracts' })).toBeChecked();
    await page.keyboard.press('Space');
    await expect(chosen.getByRole('checkbox', { name: 'My personal contracts' })).not.toBeChecked();
    await tabTo(page, chosen.getByRole('checkbox', { name: 'Globex' }), 3);
    await page.keyboard.press('Space');
    await expect(chosen.getByRole('checkbox', { name: 'Globex' })).toBeChecked();
    await expect(chosen.getByRole('checkbox', { name: 'Acme Corp' })).not.toBeChecked();
    await press(page, 'Tab', permissions.getByRole('checkbox', { name: /contracts:read/ }));
    await press(page, 'Tab', permissions.getByRole('checkbox', { name: /contracts:export/ }));
    await page.keyboard.press('Space');
    await expect(permissions.getByRole('checkbox', { name: /contracts:export/ })).not.toBeChecked();
    await press(page, 'Tab', dialog.getByRole('textbox', { name: 'Allowed addresses (optional)' }));
    // Back with Shift+Tab, and forward again.
    await press(page, 'Shift+Tab', permissions.getByRole('checkbox', { name: /contracts:export/ }));
    await press(page, 'Tab', dialog.getByRole('textbox', { name: 'Allowed addresses (optional)' }));
    await press(page, 'Tab', dialog.getByRole('button', { name: 'Cancel' }));
    await press(page, 'Tab', dialog.getByRole('button', { name: 'Create key' }));
    await snapshot(page, testInfo, 'keyboard-restricted-key');
  });

  await test.step('a screen reader finds a name for every control, and the choices as named groups', async () => {
    await expect(dialog).toMatchAriaSnapshot(`
      - dialog "Create API key":
        - heading "Create API key" [level=2]
        - textbox "Name"
        - combobox "Expires after":
          - option "1 year" [selected]
        - combobox "Owner":
          - option "Me (a personal key)" [selected]
          - option "Globex (an organisation key)"
        - group "What it may read":
          - radio /^Everything I can see/
          - radio "Only what I choose" [checked]
          - group "Contracts it may read":
            - checkbox "My personal contracts" [checked=false]
            - checkbox "Acme Corp" [checked=false]
            - checkbox "Globex" [checked]
        - group "Permissions":
          - checkbox /^contracts:read List contracts/ [checked]
          - checkbox /^contracts:export Export contracts as CSV/ [checked=false]
        - textbox "Allowed addresses (optional)"
        - button "Cancel"
        - button "Create key"
    `);
    // And no control or group without a name anywhere in the dialog.
    const tree = await dialog.ariaSnapshot();
    const unnamed = tree.split('\n').filter((line) => new RegExp(`^\\s*- (${NAMED_ROLES.join('|')})(\\s*\\[[^\\]]*\\])?:?\\s*$`).test(line));
    expect(unnamed, tree).toEqual([]);
    // Each field's hint is read with it.
    await expect(dialog.getByRole('textbox', { name: 'Allowed addresses (optional)' })).toHaveAccessibleDescription(/at most 20/);
    await expect(nameField).toHaveAccessibleDescription(/What the key is for/);
  });

  await test.step('Tab and Shift+Tab never leave the dialog', async () => {
    for (const key of [...Array<string>(14).fill('Tab'), ...Array<string>(14).fill('Shift+Tab')]) {
      await page.keyboard.press(key);
      const focus = await focusPlace(page, dialog);
      expect(focus.place, `after ${key}, focus is on ${focus.label}`).not.toBe('page');
    }
  });

  let key = '';
  await test.step('created with Enter; the secret is shown once, with the focus in its dialog; closing it gives the focus back', async () => {
    await tabTo(page, dialog.getByRole('button', { name: 'Create key' }), 20);
    await page.keyboard.press('Enter');
    const shown = page.getByRole('dialog', { name: 'Your new API key' });
    await expect(shown).toBeVisible();
    await expect(dialog).toBeHidden();
    expect((await focusPlace(page, shown)).place).toBe('dialog');
    key = ((await shown.getByTestId('new-api-key').textContent()) ?? '').trim();
    expect(key).toMatch(KEY_PATTERN);
    // Escape does not close it: the secret would be lost.
    await page.keyboard.press('Escape');
    await expect(shown).toBeVisible();
    await tabTo(page, shown.getByRole('button', { name: 'I have saved my key' }), 6);
    await page.keyboard.press('Enter');
    await expect(shown).toBeHidden();
    await expect(createButton(page)).toBeFocused();
  });

  await test.step('the key is as chosen: Globex only, read only', async () => {
    await expect(keyRow(page, name).getByTestId('key-restrictions')).toHaveText('access: Globex · read · from any address');
    const api = callsWith(request, key);
    const list = await api.list();
    expect(list.status, list.text).toBe(200);
    const contracts = (list.body as unknown as { data: { contracts: { organization_id: string | null }[] } }).data.contracts;
    expect(contracts.length).toBeGreaterThan(0);
    expect(new Set(contracts.map((c) => c.organization_id))).toEqual(new Set([GLOBEX.id]));
    expectInsufficientScope(await api.export());
  });
});

// On a server of its own that reads the client's address from a header, so that allowed
// addresses can be set and apply (the suite's server refuses them: it cannot know the address).
test.describe('on a server of its own (knows client addresses)', () => {
  let own: OwnServer;
  test.beforeAll(async ({ playwright }) => {
    test.setTimeout(240_000);
    own = await startOwnServer(OWN_PORT, { CLIENT_ADDRESS_HEADER, RATE_LIMIT_GENERAL_PER_WINDOW: '100000' });
    // A fresh server's first sign-in and first page take long on a busy machine: not the test's subject.
    const warm = await playwright.request.newContext({ baseURL: own.base, timeout: 120_000 });
    await signInOverHttp(warm, BOB.email);
    expect((await warm.get(`/settings/organizations/${GLOBEX.id}`)).status()).toBe(200);
    await warm.dispose();
  });
  test.afterAll(() => own?.stop());

  test("an organisation's key on its page: roll with a grace period (both secrets work), then edit its permissions and addresses", async ({ browser, playwright }, testInfo) => {
    const name = unique('Globex nightly');
    const context = await browser.newContext({ baseURL: own.base, extraHTTPHeaders: { [CLIENT_ADDRESS_HEADER]: '203.0.113.9' } });
    const page = await context.newPage();
    const request = await playwright.request.newContext({ baseURL: own.base });
    await signInOverHttp(page.request, BOB.email);
    const created = await trpcMutation<{ secret: string; token: { id: string } }>(page.request, 'apiKeys.create', {
      name,
      expiresInDays: 90,
      owner: { kind: 'organization', organizationId: GLOBEX.id },
    });
    const first = created.secret;

    await page.goto(`/settings/organizations/${GLOBEX.id}`);
    const row = page.getByTestId('organization-key-row').filter({ has: page.getByRole('cell', { name, exact: true }) });
    await waitForHydration(row.getByRole('button', { name: `Roll ${name}` }));
    await expect(row.locator('td[data-label="Permissions"]')).toHaveText('read, export');
    await expect(row.locator('td[data-label="Allowed addresses"]')).toHaveText('any address');

    let second = '';
    await test.step('roll, the old secret working for 1 hour: the new secret is shown once, both answer 200', async () => {
      await row.getByRole('button', { name: `Roll ${name}` }).click();
      const roll = page.getByRole('dialog', { name: `Roll “${name}”?` });
      const grace = roll.getByRole('group', { name: 'The old secret stops working' });
      await expect(grace.getByRole('radio', { name: 'In 24 hours' })).toBeChecked();
      await grace.getByRole('radio', { name: 'In 1 hour' }).check();
      await roll.getByRole('button', { name: 'Roll key' }).click();
      const shown = page.getByRole('dialog', { name: 'The new secret of your key' });
      await expect(shown).toContainText('The old one keeps working until');
      second = ((await shown.getByTestId('new-api-key').textContent()) ?? '').trim();
      expect(second).toMatch(KEY_PATTERN);
      expect(second).not.toBe(first);
      await snapshot(page, testInfo, 'organization-key-rolled');
      await shown.getByRole('button', { name: 'I have saved my key' }).click();
      await expect(shown).toBeHidden();
      // The same key: one row, its hint now the new secret's.
      await expect(row).toHaveCount(1);
      await expect(row.locator('td[data-label="Key"]')).toContainText(`…${second.slice(-4)}`);
      for (const secret of [first, second]) {
        const list = await callsWith(request, secret).list();
        expect(list.status, list.text).toBe(200);
      }
      const state = await trpcQuery<{ organizationKeys: { id: string; previousExpiresAt: string | null }[] }>(page.request, 'organizationKeys.list', {
        organizationId: GLOBEX.id,
      });
      const previousEnds = Date.parse(state.organizationKeys.find((k) => k.id === created.token.id)?.previousExpiresAt ?? '');
      expect(previousEnds - Date.now()).toBeGreaterThan(55 * 60_000);
      expect(previousEnds - Date.now()).toBeLessThanOrEqual(60 * 60_000);
    });

    await test.step('edit: read only, from 203.0.113.0/24; the row shows it', async () => {
      await row.getByRole('button', { name: `Edit ${name}` }).click();
      const edit = page.getByRole('dialog', { name: `Edit restrictions of “${name}”` });
      // An organisation's key reads its organisation: no access choice.
      await expect(edit).toContainText('It reads Globex’s contracts only.');
      await expect(edit.getByRole('group', { name: 'What it may read' })).toHaveCount(0);
      await edit.getByRole('checkbox', { name: /contracts:export/ }).uncheck();
      await edit.getByLabel('Allowed addresses (optional)').fill('203.0.113.0/24');
      await edit.getByRole('button', { name: 'Save restrictions' }).click();
      await expect(edit).toBeHidden();
      await expect(row.locator('td[data-label="Permissions"]')).toHaveText('read');
      await expect(row.locator('td[data-label="Allowed addresses"]')).toHaveText('203.0.113.0/24');
      await snapshot(page, testInfo, 'organization-key-edited');
    });

    await test.step('the API enforces it, for the new secret and the old one in its grace', async () => {
      for (const secret of [second, first]) {
        const inside = callsWith(request, secret, '203.0.113.77');
        const list = await inside.list();
        expect(list.status, list.text).toBe(200);
        expectInsufficientScope(await inside.export());
        const outside = await callsWith(request, secret, '198.51.100.4').list();
        expect(outside.status, outside.text).toBe(403);
        expect(outside.body.error.code).toBe('ip_not_allowed');
        expect(outside.body.error.message).toContain('198.51.100.4');
      }
    });
    await request.dispose();
    await context.close();
  });
});
