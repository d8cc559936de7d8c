import { expect, type Locator, type Page } from '@playwright/test';

/** Settings → API Keys as the key specs (e2e/keys-ui*.spec.ts) drive it. */

export const KEY_PATTERN = /^cdapi_[0-9A-Za-z]{38}$/;
/** The header an own server of these specs reads the client address from (CLIENT_ADDRESS_HEADER). */
export const CLIENT_ADDRESS_HEADER = 'x-e2e-client-address';

/** A name of this run: the specs share the suite's database. */
export function uniqueNames(): (base: string) => string {
  const run = Date.now().toString(36);
  return (base) => `${base} ${run}`;
}

export const createButton = (page: Page) => page.getByRole('button', { name: 'Create API key', exact: true });
export const keyRow = (page: Page, name: string) => page.getByTestId('api-key-row').filter({ has: page.getByRole('cell', { name, exact: true }) });

/** Until React has attached its handlers to `button` (a click before that does nothing). */
export async function waitForHydration(button: Locator): Promise<void> {
  await expect
    .poll(() => button.evaluate((el) => Object.keys(el).some((k) => k.startsWith('__reactProps'))), { message: 'the page hydrates' })
    .toBe(true);
}

export async function openKeysPage(page: Page): Promise<void> {
  await page.goto('/settings/api-keys');
  await waitForHydration(createButton(page));
}
