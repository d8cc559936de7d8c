import { expect, test, type Page, type TestInfo } from '@playwright/test';
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
  await expect(page.getByRole('figure', { name: 'Upcoming renewals and expirations' }).locator('svg.recharts-surface').first()).toBeVisible();
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
  await expectNoSidewaysScroll(page, testInfo, 'api-reference-signed-in', { fullPage: false });

  await revokeKey(page.request, key.id);
  await revokeFeed(page.request, feed.id);
});
