import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect, test, type APIRequestContext, type Locator, type Page, type TestInfo } from '@playwright/test';
import { DEMO_USERS, demoContractId } from '@/db/seed/demo';
import { snapshot } from './support/artifacts';
import { createFeed, mintKey, revokeFeed, revokeKey, signInOverHttp } from './support/session';

/**
 * Every page at 390 px wide (a phone) in Debian's Chromium (issue 16): nothing scrolls
 * sideways (document.documentElement.scrollWidth <= 390), with every disclosure opened
 * and the lists filled, and the top bar keeps its links. A full-page screenshot of each
 * page is kept under test-results/.
 */

const WIDTH = 390;
test.use({ viewport: { width: WIDTH, height: 844 }, hasTouch: true, isMobile: true, deviceScaleFactor: 2 });

// Scalar renders the reference in the browser; on a shared two-core machine that takes a while.
const expectSoon = expect.configure({ timeout: 60_000 });

/** Opens every <details> (the chart's figures table, the filters' date ranges), so that hidden content counts too. */
async function openDisclosures(page: Page): Promise<void> {
  await page.locator('details').evaluateAll((all) => all.forEach((d) => ((d as HTMLDetailsElement).open = true)));
}

/** The page's width, and what sticks out on the right when it is too wide. */
async function expectNoSidewaysScroll(page: Page, testInfo: TestInfo, name: string, options: { fullPage?: boolean } = {}): Promise<void> {
  await openDisclosures(page);
  const { scrollWidth, overflowing } = await page.evaluate((width) => {
    const overflowing = [...document.querySelectorAll('body *')]
      .filter((el) => el.getBoundingClientRect().right > width + 0.5)
      // Only elements that no box of their own clips: a scrolling box clips what it contains,
      // except an absolutely positioned element whose containing block is outside it (the
      // visually hidden text of a table cell widened the page that way).
      .filter((el) => {
        let escapes = getComputedStyle(el).position === 'absolute' || getComputedStyle(el).position === 'fixed';
        for (let p = el.parentElement; p && p !== document.body; p = p.parentElement) {
          const style = getComputedStyle(p);
          const clips = ['auto', 'scroll', 'hidden', 'clip'].includes(style.overflowX) && p.getBoundingClientRect().right <= width + 0.5;
          if (clips && !escapes) return false;
          if (escapes && style.position !== 'static') escapes = false;
        }
        return true;
      })
      .slice(0, 5)
      .map((el) => `${el.tagName.toLowerCase()}.${String(el.className).slice(0, 60)}`);
    return { scrollWidth: document.documentElement.scrollWidth, overflowing };
  }, WIDTH);
  await snapshot(page, testInfo, name, options);
  expect(scrollWidth, `${name}: document width at ${WIDTH} px (sticking out: ${overflowing.join(', ')})`).toBeLessThanOrEqual(WIDTH);
}

/**
 * Scalar renders the reference's later sections a few seconds after its first screen: wait
 * for the last one (the webhooks, whose long headings widened the page once) before measuring.
 */
async function expectReferenceRendered(page: Page): Promise<void> {
  await expectSoon(page.getByRole('heading', { name: 'contract.extraction_completed', exact: true }).first()).toBeAttached();
}

async function expectTopBarLinks(page: Page, signedIn: boolean): Promise<void> {
  const nav = page.getByRole('navigation', { name: 'Main' });
  const names = signedIn ? ['Contracts', 'Settings', 'API reference'] : ['API reference'];
  for (const name of names) await expect(nav.getByRole('link', { name })).toBeInViewport();
  await expect(page.getByRole('banner').getByRole('button', { name: 'Sign out' }).or(page.getByRole('banner').getByRole('link', { name: 'Sign in' }))).toBeInViewport();
}

test('signed out: home, sign-in, sign-up and the API reference', async ({ page }, testInfo) => {
  test.setTimeout(120_000);
  for (const [path, name] of [
    ['/', 'home'],
    ['/sign-in', 'sign-in'],
    ['/sign-up', 'sign-up'],
  ] as const) {
    await page.goto(path);
    await expectTopBarLinks(page, false);
    await expectNoSidewaysScroll(page, testInfo, name);
  }
  await page.goto('/docs/api');
  await expectSoon(page.getByRole('heading', { name: 'Contract Data API', level: 1 })).toBeVisible();
  await expectReferenceRendered(page);
  // The reference is many screens long: its first screen is the artifact.
  await expectNoSidewaysScroll(page, testInfo, 'api-reference', { fullPage: false });
});

test('signed in: home, the contracts list and a contract, settings, the API reference', async ({ page }, testInfo) => {
  test.setTimeout(180_000);
  // Bob sees the most: two organisations, every currency, the longest titles.
  await signInOverHttp(page.request, DEMO_USERS.bob.email);
  const key = await mintKey(page.request, 'e2e phone layout: a key with a long name to fill its card', 30);
  const feed = await createFeed(page.request, 'e2e phone layout: a feed with a long name to fill its card');

  await page.goto('/');
  await expectTopBarLinks(page, true);
  await expect(page.getByRole('banner')).toContainText(DEMO_USERS.bob.email);
  await expectNoSidewaysScroll(page, testInfo, 'home-signed-in');

  await page.goto('/contracts?limit=100');
  await expect(page.getByTestId('contract-row').first()).toBeVisible();
  await expect(page.getByRole('figure', { name: 'Upcoming renewals, expirations and notice deadlines' }).locator('svg.recharts-surface').first()).toBeVisible();
  await expectNoSidewaysScroll(page, testInfo, 'contracts');
  // The list's rows are cards: as wide as the page, each cell under its column's label.
  const card = page.getByTestId('contract-row').first();
  expect((await card.boundingBox())!.width).toBeLessThanOrEqual(WIDTH);
  expect(await card.locator('td[data-label="Expires"]').evaluate((td) => getComputedStyle(td, '::before').content)).toBe('"Expires"');
  // The chart's figures table is wider than a phone: it scrolls inside its own box.
  const figures = page.getByTestId('upcoming-figures');
  expect(await figures.evaluate((table) => getComputedStyle(table.parentElement!).overflowX)).toBe('auto');

  await page.goto('/contracts?q=no-such-contract-anywhere');
  await expect(page.getByRole('heading', { name: 'No contracts match this filter' })).toBeVisible();
  await expectNoSidewaysScroll(page, testInfo, 'contracts-empty');

  for (const id of [demoContractId('acme-2'), demoContractId('bob-2'), 'not-a-uuid']) {
    await page.goto(`/contracts/${id}`);
    await expectNoSidewaysScroll(page, testInfo, `contract-${id}`);
  }

  await page.goto('/settings/api-keys');
  await expect(page.getByTestId('api-key-row').first()).toBeVisible();
  await expectNoSidewaysScroll(page, testInfo, 'settings-api-keys');
  // The reference is one tap away from the keys' page too.
  await expect(page.getByRole('main').getByRole('link', { name: 'API reference' })).toBeVisible();
  await page.getByRole('button', { name: 'Create API key' }).click();
  await expect(page.getByRole('dialog', { name: 'Create API key' })).toBeVisible();
  await expectNoSidewaysScroll(page, testInfo, 'settings-api-keys-dialog');
  await page.getByRole('dialog').getByRole('button', { name: 'Cancel' }).click();

  await page.goto('/settings/calendar');
  await expect(page.getByTestId('calendar-feed-row').first()).toBeVisible();
  await expectNoSidewaysScroll(page, testInfo, 'settings-calendar');

  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'API reference' }).click();
  await expect(page).toHaveURL(/\/docs\/api(#.*)?$/);
  await expectSoon(page.getByRole('heading', { name: 'Contract Data API', level: 1 })).toBeVisible();
  await expectReferenceRendered(page);
  await expectNoSidewaysScroll(page, testInfo, 'api-reference-signed-in', { fullPage: false });

  await revokeKey(page.request, key.id);
  await revokeFeed(page.request, feed.id);
});

/** A call of the app's tRPC endpoint with the signed-in session: a mutation (POST) or a query (GET). */
async function trpcCall<T>(api: APIRequestContext, procedure: string, input?: unknown): Promise<T> {
  const res = input === undefined ? await api.get(`/api/trpc/${procedure}`) : await api.post(`/api/trpc/${procedure}`, { data: input });
  const text = await res.text();
  expect(res.status(), `${procedure}: ${text}`).toBe(200);
  return (JSON.parse(text) as { result: { data: T } }).result.data;
}

/** Clicks `button` until `shown` appears (a click before the page has hydrated does nothing). */
async function clickUntilShown(button: Locator, shown: Locator): Promise<void> {
  await expect(async () => {
    if (!(await shown.isVisible())) await button.click();
    await expect(shown).toBeVisible({ timeout: 1_000 });
  }).toPass({ timeout: 20_000 });
}

test('signed in: webhooks with an endpoint and its delivery log, sessions, the contracts page\'s calendar dialogs', async ({ page }, testInfo) => {
  test.setTimeout(120_000);
  // A receiver on this machine (the server runs with WEBHOOK_ALLOW_PRIVATE_URLS=true), whose
  // answer is one long word, the hardest text to wrap in the log.
  const receiver = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(200, { 'content-type': 'text/plain' }).end(`accepted-by-the-phone-layout-receiver-${'x'.repeat(120)}`));
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks/phone-layout/a-rather-long-path-that-has-to-wrap-on-a-phone-${testInfo.repeatEachIndex}-${testInfo.retry}`;
  let endpointId = '';
  const feedIds: string[] = [];
  const SUBSCRIBED_FEED = `e2e phone layout: subscribed from the contracts page ${testInfo.repeatEachIndex}-${testInfo.retry}`;
  try {
    await signInOverHttp(page.request, DEMO_USERS.bob.email);
    // Every event type, so that the card lists them all and the offsets too.
    const created = await trpcCall<{ endpoint: { id: string } }>(page.request, 'webhooks.create', { url });
    endpointId = created.endpoint.id;
    const sent = await trpcCall<{ state: string }>(page.request, 'webhooks.sendTest', { id: endpointId });
    expect(sent.state).toBe('succeeded');

    await page.goto('/settings/webhooks');
    const endpoint = page.getByTestId('webhook-endpoint').filter({ hasText: url });
    await expect(endpoint).toBeVisible();
    await clickUntilShown(endpoint.getByRole('button', { name: 'Show delivery log' }), endpoint.getByRole('button', { name: 'Hide delivery log' }));
    await expect(endpoint.getByRole('table', { name: 'Delivery log' })).toBeVisible();
    // The test event's row (the worker may add upcoming-date events of Bob's contracts meanwhile).
    await expect(endpoint.getByTestId('webhook-delivery-row').filter({ hasText: 'webhook.test' })).toHaveCount(1);
    await expectNoSidewaysScroll(page, testInfo, 'settings-webhooks');
    const add = page.getByRole('dialog', { name: 'Add webhook endpoint' });
    await clickUntilShown(page.getByRole('button', { name: 'Add endpoint', exact: true }), add);
    await expectNoSidewaysScroll(page, testInfo, 'settings-webhooks-dialog');
    await add.getByRole('button', { name: 'Cancel' }).click();

    await page.goto('/settings/sessions');
    await expect(page.getByRole('button', { name: 'Sign out everywhere' })).toBeVisible();
    await expectNoSidewaysScroll(page, testInfo, 'settings-sessions');

    // An active feed with a long name, which the dialog names.
    feedIds.push((await createFeed(page.request, 'e2e phone layout: a long feed name for the subscribe dialog')).id);
    await page.goto('/contracts');
    const subscribe = page.getByRole('dialog', { name: 'Subscribe in your calendar' });
    await clickUntilShown(page.getByRole('button', { name: 'Subscribe in calendar' }), subscribe);
    await expect(subscribe.getByTestId('existing-feeds')).toBeVisible();
    await expectNoSidewaysScroll(page, testInfo, 'contracts-subscribe-dialog');
    await subscribe.getByLabel('Name').fill(SUBSCRIBED_FEED);
    await subscribe.getByRole('button', { name: 'Create feed' }).click();
    const feed = page.getByRole('dialog', { name: 'Your new calendar feed' });
    await expect(feed.getByTestId('new-calendar-feed-url')).toBeVisible();
    await expectNoSidewaysScroll(page, testInfo, 'contracts-subscribe-feed-url');
    await feed.getByRole('button', { name: 'I have saved the address' }).click();
    await expect(feed).toBeHidden();
  } finally {
    if (endpointId) await trpcCall(page.request, 'webhooks.delete', { id: endpointId });
    if (feedIds.length > 0) {
      const feeds = await trpcCall<{ id: string; name: string; status: string }[]>(page.request, 'calendarFeeds.list');
      for (const f of feeds) if (f.status === 'active' && (feedIds.includes(f.id) || f.name === SUBSCRIBED_FEED)) await revokeFeed(page.request, f.id);
    }
    receiver.closeAllConnections();
    await new Promise((resolve) => receiver.close(resolve));
  }
});
