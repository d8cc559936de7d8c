import { readFileSync } from 'node:fs';
import { expect, test, type APIRequestContext, type Page } from '@playwright/test';
import ICAL from 'ical.js';
import Papa from 'papaparse';
import { DEMO_ORGS, DEMO_USERS } from '@/db/seed/demo';
import { API, readResponse } from './support/api';
import { snapshot } from './support/artifacts';
import { fillSignInForm, mintKey, revokeFeed, revokeKey, signInOverHttp } from './support/session';

/**
 * The contracts page's "Download CSV" and "Subscribe in calendar" in Debian's Chromium
 * (issue 16): the file is exactly the page's list (its filters and sort, every page of it)
 * through the session, without an API key; another site cannot start the download; a
 * signed-out visitor comes back to the list after signing in; the calendar button creates
 * a feed and shows its webcal:// address once.
 */

type UserName = keyof typeof DEMO_USERS;

const rowIds = (page: Page) => page.getByTestId('contract-row').evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-id')));

async function apiIds(request: APIRequestContext, key: string, query: string): Promise<string[]> {
  const res = await readResponse<{ data: { contracts: { id: string }[] } }>(
    await request.get(`${API}/contracts?${query}`, { headers: { 'X-API-Key': key } }),
  );
  expect(res.status, res.text).toBe(200);
  return res.body.data.contracts.map((c) => c.id);
}

/** Waits until React has hydrated the list's actions, so that the calendar button reacts. */
async function waitForHydration(page: Page): Promise<void> {
  const button = page.getByRole('button', { name: 'Subscribe in calendar' });
  await expect
    .poll(() => button.evaluate((el) => Object.keys(el).some((k) => k.startsWith('__reactProps'))), { message: 'the contracts page hydrates' })
    .toBe(true);
}

async function signIn(page: Page, user: UserName): Promise<void> {
  await signInOverHttp(page.request, DEMO_USERS[user].email);
}

test('Download CSV gives exactly the list the page shows, every page of it, without an API key', async ({ page, request }, testInfo) => {
  await signIn(page, 'bob');
  await page.goto('/contracts');
  const form = page.getByRole('form', { name: 'Filter contracts' });
  await form.getByLabel('Status', { exact: true }).selectOption({ label: 'Completed' });
  await form.getByLabel('Sort by', { exact: true }).selectOption({ label: 'Expiring soonest first' });
  await form.getByRole('button', { name: 'Apply filters' }).click();
  await expect(page).toHaveURL('/contracts?status=completed&sort=expiration_date');
  // Pages of 5, so that the list has more than one page.
  await page.goto('/contracts?status=completed&sort=expiration_date&limit=5');
  await expect(page.getByTestId('contract-row')).toHaveCount(5);
  const shown = await rowIds(page);

  const link = page.getByRole('link', { name: 'Download CSV' });
  // The list's filters and sort; not its page.
  await expect(link).toHaveAttribute('href', '/contracts/export?status=completed&sort=expiration_date');
  await expect(link).toHaveAccessibleDescription(/The CSV holds all \d+ contracts of this list, in this order \(up to \d+ downloads per hour\)\./);
  const [download] = await Promise.all([page.waitForEvent('download'), link.click()]);
  // A download: the page stays where it was.
  await expect(page).toHaveURL('/contracts?status=completed&sort=expiration_date&limit=5');
  expect(download.suggestedFilename()).toMatch(/^contracts-\d{4}-\d{2}-\d{2}\.csv$/);
  const text = readFileSync((await download.path())!, 'utf8');
  expect(text.startsWith('\uFEFFid,title,status,file_name,')).toBe(true);
  const rows = Papa.parse<string[]>(text.slice(1), { skipEmptyLines: true }).data;

  // The same list as the API's for the same parameters, checked with a key of bob's.
  const { key, id } = await mintKey(page.request, 'e2e download comparison', 7);
  const all = await apiIds(request, key, 'status=completed&sort=expiration_date&limit=100');
  expect(all.length).toBeGreaterThan(5);
  expect(rows.slice(1).map((r) => r[0])).toEqual(all);
  expect(rows.slice(1, 6).map((r) => r[0])).toEqual(shown);
  await expect(page.locator('#contracts-count')).toHaveText(`${all.length} contracts`);
  await snapshot(page, testInfo, 'list-with-download-and-subscribe');
  await revokeKey(page.request, id);
});

test('another site cannot start the download: its link lands on the list, and nothing is counted', async ({ page, baseURL }, testInfo) => {
  await signIn(page, 'carol');
  const target = `${baseURL}/contracts/export?status=completed`;
  // Counted downloads answer X-RateLimit-Remaining; this request has no Fetch Metadata (not a page of another site).
  const remaining = async () => Number((await page.request.get('/contracts/export')).headers()['x-ratelimit-remaining']);
  const before = await remaining();

  await page.route('http://attacker.example/**', (route) =>
    route.fulfill({
      contentType: 'text/html',
      body: `<!doctype html><title>Win a prize</title><a id="bait" href="${target}">Claim</a><script>setTimeout(() => { location.href = ${JSON.stringify(target)}; }, 10)</script>`,
    }),
  );
  let downloaded = false;
  page.on('download', () => (downloaded = true));
  // A navigation the other site's script starts, and a link the person clicks there.
  await page.goto('http://attacker.example/');
  await page.waitForURL(/\/contracts\?status=completed$/);
  await expect(page.getByRole('heading', { name: 'Contracts', level: 1 })).toBeVisible();
  await page.unroute('http://attacker.example/**');
  await page.route('http://attacker.example/**', (route) =>
    route.fulfill({ contentType: 'text/html', body: `<!doctype html><a id="bait" href="${target}">Claim</a>` }),
  );
  await page.goto('http://attacker.example/');
  await page.locator('#bait').click();
  await page.waitForURL(/\/contracts\?status=completed$/);
  await snapshot(page, testInfo, 'cross-site-download-lands-on-list');
  expect(downloaded, 'no file was downloaded').toBe(false);
  // Between the two counting requests of this test, nothing used the quota: the second
  // leaves one less, unless the window moved on. The limit is a sliding window (an hour):
  // carol's downloads of the previous hour weigh less every second, so \`remaining\` can rise
  // by one between two readings (CI, 2026-11-26, just after 17:00: 9997 twice). A counted
  // visit from the other site would take one more.
  expect(await remaining()).toBeGreaterThanOrEqual(before - 1);
});

test('signed out, the download sends to sign-in and back to the list with the same filters', async ({ page }) => {
  await page.goto(`/contracts/export?status=completed&organization_id=${DEMO_ORGS.acme.id}`);
  await expect(page).toHaveURL(
    `/sign-in?callbackUrl=${encodeURIComponent(`/contracts?status=completed&organization_id=${DEMO_ORGS.acme.id}`)}`,
  );
  await fillSignInForm(page, DEMO_USERS.alice.email, 'demo-password');
  await expect(page).toHaveURL(`/contracts?status=completed&organization_id=${DEMO_ORGS.acme.id}`);
  await expect(page.getByRole('link', { name: 'Download CSV' })).toHaveAttribute(
    'href',
    `/contracts/export?status=completed&organization_id=${DEMO_ORGS.acme.id}`,
  );
});

test('a refused parameter in a download address lands on the list, which explains it', async ({ page }) => {
  await signIn(page, 'alice');
  await page.goto(`/contracts/export?organization_id=${DEMO_ORGS.globex.id}`);
  await expect(page).toHaveURL(`/contracts?organization_id=${DEMO_ORGS.globex.id}`);
  await expect(page.getByRole('form', { name: 'Filter contracts' }).getByRole('alert')).toContainText('not a member of this organisation');
});

test('Subscribe in calendar creates a feed and shows its webcal:// address once', async ({ page, request }, testInfo) => {
  const name = `E2E contracts page ${Date.now()}`;
  await signIn(page, 'bob');
  await page.goto('/contracts');
  await waitForHydration(page);
  let feedUrl = '';

  await test.step('create a feed from the list', async () => {
    await page.getByRole('button', { name: 'Subscribe in calendar' }).click();
    const dialog = page.getByRole('dialog', { name: 'Subscribe in your calendar' });
    await expect(dialog).toContainText('not only this list');
    await expect(dialog.getByLabel('Name')).toHaveValue('My calendar');
    // What the feed reads, as in Settings: everything unless chosen otherwise.
    await expect(dialog.getByRole('group', { name: 'Contracts in the feed' }).getByRole('radio', { name: /Everything I can see/ })).toBeChecked();
    await dialog.getByLabel('Name').fill(name);
    await dialog.getByRole('button', { name: 'Create feed' }).click();
    const created = page.getByRole('dialog', { name: 'Your new calendar feed' });
    await expect(created).toContainText('it will not be shown again');
    feedUrl = ((await created.getByTestId('new-calendar-feed-url').textContent()) ?? '').trim();
    expect(feedUrl).toMatch(/^https?:\/\/[^/]+\/api\/v1\/calendar\/cdcal_[0-9A-Za-z]{38}\.ics$/);
    await expect(created.getByRole('link', { name: 'Subscribe in your calendar app' })).toHaveAttribute(
      'href',
      feedUrl.replace(/^https?:\/\//, 'webcal://'),
    );
    await snapshot(page, testInfo, 'subscribe-feed-created');
    await created.getByRole('button', { name: 'I have saved the address' }).click();
    await expect(created).toBeHidden();
    await expect(page.getByRole('button', { name: 'Subscribe in calendar' })).toBeFocused();
  });

  await test.step('the address is a calendar of bob’s dates', async () => {
    const res = await request.get(feedUrl);
    expect(res.status()).toBe(200);
    expect(res.headers()['content-type']).toBe('text/calendar; charset=utf-8');
    const events = new ICAL.Component(ICAL.parse(await res.text())).getAllSubcomponents('vevent');
    expect(events.length).toBeGreaterThan(0);
  });

  await test.step('opened again, the dialog names the existing feed and links to Settings', async () => {
    await page.getByRole('button', { name: 'Subscribe in calendar' }).click();
    const dialog = page.getByRole('dialog', { name: 'Subscribe in your calendar' });
    const note = dialog.getByTestId('existing-feeds');
    await expect(note).toContainText(name);
    await expect(note).toContainText('cannot be shown again');
    // The address is nowhere on the page any more.
    expect(await page.content()).not.toContain(feedUrl.split('/').pop()!.replace('.ics', ''));
    await snapshot(page, testInfo, 'subscribe-existing-feeds');
    await note.getByRole('link', { name: 'manage your feeds in Settings' }).click();
    await expect(page).toHaveURL('/settings/calendar');
    const row = page.getByTestId('calendar-feed-row').filter({ has: page.getByRole('cell', { name, exact: true }) });
    await expect(row).toContainText('Active');
    await expect(row.getByTestId('feed-access')).toHaveText('Reads: Everything');
  });

  const personal = `${name} personal`;
  await test.step('a feed of the personal contracts only, chosen in the same dialog', async () => {
    await page.goto('/contracts');
    await waitForHydration(page);
    await page.getByRole('button', { name: 'Subscribe in calendar' }).click();
    const dialog = page.getByRole('dialog', { name: 'Subscribe in your calendar' });
    await dialog.getByLabel('Name').fill(personal);
    const access = dialog.getByRole('group', { name: 'Contracts in the feed' });
    await access.getByRole('radio', { name: 'Only what I choose' }).check();
    await expect(access.getByRole('checkbox', { name: 'My personal contracts' })).toBeChecked();
    await expect(access.getByRole('checkbox', { name: 'Globex' })).not.toBeChecked();
    await dialog.getByRole('button', { name: 'Create feed' }).click();
    await page.getByRole('dialog', { name: 'Your new calendar feed' }).getByRole('button', { name: 'I have saved the address' }).click();
    await page.goto('/settings/calendar');
    const row = page.getByTestId('calendar-feed-row').filter({ has: page.getByRole('cell', { name: personal, exact: true }) });
    await expect(row.getByTestId('feed-access')).toHaveText('Reads: Personal');
  });

  const list = (await (await page.request.get('/api/trpc/calendarFeeds.list')).json()) as { result: { data: { id: string; name: string }[] } };
  for (const feed of list.result.data.filter((f) => f.name === name || f.name === personal)) await revokeFeed(page.request, feed.id);
});
