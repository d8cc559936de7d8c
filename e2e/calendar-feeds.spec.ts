import { expect, test, type Page } from '@playwright/test';
import ICAL from 'ical.js';
import { DEMO_USERS } from '@/db/seed/demo';
import { expectDocumented, loadContractDocument, operationId, readResponse, type ErrorBody } from './support/api';
import { snapshot } from './support/artifacts';
import { signInOverHttp } from './support/session';

/**
 * Settings -> Calendar feeds in Debian's Chromium (issue 8): create a feed, see its
 * address once, subscribe to it over HTTP as a calendar app would, revoke it, and see
 * the address answer 404. Every answer of the feed is checked against the served OpenAPI
 * document; a screenshot of each state is kept under test-results/.
 */

const ALICE = DEMO_USERS.alice;
const FEED_URL = /^https?:\/\/[^/]+\/api\/v1\/calendar\/(cdcal_[0-9A-Za-z]{38})\.ics$/;

test.use({ permissions: ['clipboard-read', 'clipboard-write'] });

const createButton = (page: Page) => page.getByRole('button', { name: 'Create calendar feed', exact: true });
const feedRow = (page: Page, name: string) =>
  page.getByTestId('calendar-feed-row').filter({ has: page.getByRole('cell', { name, exact: true }) });

/** Waits until React has hydrated the feed manager, so that its buttons react. */
async function waitForHydration(page: Page): Promise<void> {
  await expect
    .poll(() => createButton(page).evaluate((el) => Object.keys(el).some((k) => k.startsWith('__reactProps'))), {
      message: 'the calendar feeds page hydrates',
    })
    .toBe(true);
}

test('create a calendar feed, see its address once, read it as a calendar app, revoke it', async ({ page, request }, testInfo) => {
  const name = `E2E calendar ${testInfo.repeatEachIndex}.${testInfo.retry}`;
  const doc = await loadContractDocument(request);
  const feedOperation = operationId(doc, 'GET', '/calendar/{token}.ics');
  let url = '';
  let token = '';

  await test.step('the settings page explains the feed and is reachable from the settings menu', async () => {
    await signInOverHttp(page.request, ALICE.email);
    await page.goto('/settings/api-keys');
    await page.getByRole('navigation', { name: 'Settings' }).getByRole('link', { name: 'Calendar feeds' }).click();
    await expect(page).toHaveURL(/\/settings\/calendar$/);
    await expect(page.getByRole('heading', { name: 'Calendar feeds', exact: true })).toBeVisible();
    await expect(page.getByRole('note').first()).toContainText('anyone who has it can read these dates');
    await waitForHydration(page);
    await snapshot(page, testInfo, 'calendar-feeds');
  });

  await test.step('create a feed', async () => {
    await createButton(page).click();
    const dialog = page.getByRole('dialog', { name: 'Create calendar feed' });
    await expect(dialog).toBeVisible();
    await expect(dialog.getByLabel('Name')).toBeFocused();
    await dialog.getByLabel('Name').fill(name);
    // Two weeks by default; this feed reminds a week before each notice deadline.
    const reminder = dialog.getByLabel('Reminder before a notice deadline');
    await expect(reminder).toHaveValue('14');
    await reminder.selectOption({ label: '7 days before' });
    await dialog.getByRole('button', { name: 'Create feed' }).click();
    await expect(dialog).toBeHidden();
  });

  await test.step('the address is shown once, with a copy button and a webcal link', async () => {
    const dialog = page.getByRole('dialog', { name: 'Your new calendar feed' });
    await expect(dialog).toBeVisible();
    await expect(dialog).toContainText('it will not be shown again');
    url = ((await dialog.getByTestId('new-calendar-feed-url').textContent()) ?? '').trim();
    token = FEED_URL.exec(url)?.[1] ?? '';
    expect(token, url).not.toBe('');
    await expect(dialog.getByRole('link', { name: 'Subscribe in your calendar app' })).toHaveAttribute(
      'href',
      url.replace(/^https?:\/\//, 'webcal://'),
    );
    await dialog.getByRole('button', { name: 'Copy' }).click();
    await expect(dialog.getByRole('status')).toHaveText('Copied to the clipboard.');
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(url);
    await snapshot(page, testInfo, 'feed-created');
    // Escape does not close it: the address would be gone before it was copied.
    await page.keyboard.press('Escape');
    await expect(dialog).toBeVisible();
    await dialog.getByRole('button', { name: 'I have saved the address' }).click();
    await expect(dialog).toBeHidden();
    await expect(feedRow(page, name)).toContainText(`cdcal_…${token.slice(-4)}`);
    await expect(feedRow(page, name)).toContainText('Active');
  });

  await test.step('after a reload only the hint exists', async () => {
    await page.reload();
    await expect(feedRow(page, name).locator('code')).toHaveText(`cdcal_…${token.slice(-4)}`);
    // The list says which reminder the feed was created with.
    await expect(feedRow(page, name).getByTestId('feed-reminder')).toHaveText('· Reminds 7 days before each notice deadline');
    expect(await page.content()).not.toContain(token.slice('cdcal_'.length, -4));
    const list = await page.request.get('/api/trpc/calendarFeeds.list');
    expect(list.status()).toBe(200);
    expect(await list.text()).not.toContain(token.slice('cdcal_'.length, -4));
    await waitForHydration(page);
  });

  await test.step('the address answers a calendar, without cookies or headers', async () => {
    const res = await readResponse(await request.get(url));
    expect(res.status, res.text.slice(0, 300)).toBe(200);
    expect(res.headers['content-type']).toBe('text/calendar; charset=utf-8');
    expect(res.headers['cache-control']).toBe('private, max-age=300');
    expectDocumented(doc, feedOperation, res, 'GET the new feed');
    const calendar = new ICAL.Component(ICAL.parse(res.text));
    const events = calendar.getAllSubcomponents('vevent');
    const summaries = events.map((v) => new ICAL.Event(v).summary);
    // alice sees her personal contracts and Acme's: 19 dates, notice deadlines included (tests/calendar/feed.test.ts lists them).
    expect(summaries).toHaveLength(19);
    expect(summaries).toContain('Renews automatically: Salesforce Enterprise Subscription');
    expect(summaries).toContain('Expires: Apartment Lease, "Rue de Rivoli"');
    // The notice deadline's reminder is the one chosen in the dialog.
    const notice = events.find((v) => new ICAL.Event(v).summary === 'Give notice by: Salesforce Enterprise Subscription')!;
    expect(String(notice.getFirstSubcomponent('valarm')!.getFirstPropertyValue('trigger'))).toBe('-P7D');
    // last_used_at is written after the response, without delaying it.
    await expect
      .poll(
        async () => {
          const list = (await (await page.request.get('/api/trpc/calendarFeeds.list')).json()) as {
            result: { data: { name: string; lastUsedAt: string | null }[] };
          };
          return list.result.data.find((f) => f.name === name)?.lastUsedAt ?? null;
        },
        { message: 'last_used_at is recorded' },
      )
      .not.toBeNull();
  });

  await test.step('revoke it after a confirmation that names it', async () => {
    await page.reload();
    await waitForHydration(page);
    const row = feedRow(page, name);
    await expect(row.locator('td').nth(3)).not.toHaveText('Never'); // last used
    await row.getByRole('button', { name: `Revoke ${name}` }).click();
    const dialog = page.getByRole('dialog', { name: `Revoke “${name}”?` });
    await expect(dialog).toBeVisible();
    await expect(dialog).toContainText(`cdcal_…${token.slice(-4)}`);
    await expect(dialog.getByRole('button', { name: 'Cancel' })).toBeFocused();
    await snapshot(page, testInfo, 'revoke-confirm');
    await dialog.getByRole('button', { name: 'Revoke feed' }).click();
    await expect(dialog).toBeHidden();
    await expect(row).toContainText('Revoked');
    await expect(row.getByRole('button', { name: `Revoke ${name}` })).toHaveCount(0);
    await snapshot(page, testInfo, 'feed-revoked');
  });

  await test.step('the revoked address answers the 404 envelope', async () => {
    const res = await readResponse<ErrorBody>(await request.get(url));
    expect(res.status, res.text).toBe(404);
    expect(res.body).toEqual({
      success: false,
      error: { code: 'not_found', message: expect.any(String), details: [] },
      request_id: res.headers['x-request-id'],
    });
    expect(res.text).not.toContain(token);
    expectDocumented(doc, feedOperation, res, 'GET the revoked feed');
  });
});
