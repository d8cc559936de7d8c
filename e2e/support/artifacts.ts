import type { Page, TestInfo } from '@playwright/test';

/**
 * A screenshot kept as an artifact: written under test-results/ (the test's output
 * directory) and attached to the report. Full-page unless `fullPage: false`; a long page
 * (the API reference) takes seconds to capture on a busy machine, more than the default
 * action timeout.
 */
export async function snapshot(page: Page, testInfo: TestInfo, name: string, options: { fullPage?: boolean } = {}): Promise<void> {
  const path = testInfo.outputPath(`${String(testInfo.attachments.length + 1).padStart(2, '0')}-${name}.png`);
  const body = await page.screenshot({ path, fullPage: options.fullPage ?? true, animations: 'disabled', caret: 'hide', timeout: 30_000 });
  await testInfo.attach(name, { body, contentType: 'image/png' });
}
