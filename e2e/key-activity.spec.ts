import { expect, test } from '@playwright/test';
import { DEMO_USERS } from '@/db/seed/demo';
import { API } from './support/api';
import { mintKey, signInOverHttp } from './support/session';

/**
 * Settings → API Keys → a key (usage chart with its table, last use, the request log,
 * the request-id search) and Settings → Security log (filter, CSV), in Debian's Chromium.
 */

const CAROL = DEMO_USERS.carol;

test('a key’s page shows its usage and requests, and finds a request by the id of its error body', async ({ page }) => {
  await signInOverHttp(page.request, CAROL.email);
  const key = await mintKey(page.request, `activity ${Date.now()}`);
  expect((await page.request.get(`${API}/contracts?limit=1`, { headers: { 'X-API-Key': key.key, 'User-Agent': 'nightly-etl/2.1' } })).status()).toBe(200);
  const missing = await page.request.get(`${API}/contracts/00000000-0000-4000-8000-000000000000`, { headers: { 'X-API-Key': key.key } });
  expect(missing.status()).toBe(404);
  const requestId = ((await missing.json()) as { request_id: string }).request_id;

  await page.goto('/settings/api-keys');
  await page.getByRole('link', { name: key.name, exact: true }).click();
  await expect(page.getByRole('heading', { name: new RegExp(key.name) })).toBeVisible();
  await expect(page.getByTestId('usage-totals')).toContainText('2 (1 2xx, 0 304, 1 4xx, 0 429, 0 5xx)');
  await expect(page.getByTestId('usage-chart').locator('.recharts-bar-rectangle').first()).toBeVisible();
  await page.getByText('Show as a table').click();
  await expect(page.getByTestId('usage-table').locator('tbody tr')).toHaveCount(1);

  const rows = page.getByTestId('request-row');
  await expect(rows).toHaveCount(2);
  await expect(rows.first()).toContainText('404');
  await page.getByLabel('Status').selectOption('2xx');
  await expect(rows).toHaveCount(1);
  await expect(rows.first()).toContainText('/api/v1/contracts?limit=1');

  await page.getByRole('textbox', { name: 'Find a request by its id' }).fill(requestId);
  await page.getByRole('button', { name: 'Find', exact: true }).click();
  const details = page.getByTestId('request-details');
  await expect(details).toContainText(requestId);
  await expect(details).toContainText('404 (not_found)');
  await page.getByRole('button', { name: 'Close' }).click();

  await page.getByRole('textbox', { name: 'Find a request by its id' }).fill(`req_${'f'.repeat(32)}`);
  await page.getByRole('button', { name: 'Find', exact: true }).click();
  await expect(page.getByRole('search').getByRole('alert')).toContainText('No request');
});

test('another person’s key page is not found', async ({ page, browser }) => {
  await signInOverHttp(page.request, CAROL.email);
  const key = await mintKey(page.request, `private ${Date.now()}`);
  const other = await browser.newContext();
  await signInOverHttp(other.request, DEMO_USERS.bob.email);
  const res = await other.request.get(`/settings/api-keys/${key.id}`);
  expect(res.status()).toBe(404);
  await other.close();
});

test('the security log lists my key’s creation, filters by kind, and downloads as CSV', async ({ page }) => {
  await signInOverHttp(page.request, CAROL.email);
  const key = await mintKey(page.request, `audited ${Date.now()}`);
  await page.goto('/settings/security-log');
  const events = page.getByTestId('security-event');
  await expect(events.filter({ hasText: key.name }).first()).toContainText('API key created');
  await page.getByLabel('Kind').selectOption('sign_in.succeeded');
  await page.getByRole('button', { name: 'Apply' }).click();
  await expect(events.first()).toContainText('Signed in');
  await expect(events.filter({ hasText: 'API key created' })).toHaveCount(0);

  const download = page.waitForEvent('download');
  await page.getByRole('link', { name: 'Download CSV' }).click();
  const file = await download;
  expect(file.suggestedFilename()).toMatch(/^security-log-\d{4}-\d{2}-\d{2}\.csv$/);

  const bad = await page.request.get('/settings/security-log/export?kind=nope');
  expect(bad.status()).toBe(400);
  expect(await bad.text()).toContain('Unknown kind');
});
