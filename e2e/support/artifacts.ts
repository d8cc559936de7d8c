import type { Page, TestInfo } from '@playwright/test';

/**
 * A full-page screenshot kept as an artifact: written under test-results/ (the test's
 * output directory) and attached to the report.
 */
export async function snapshot(page: Page, testInfo: TestInfo, name: string): Promise<void> {
  const path = testInfo.outputPath(`${String(testInfo.attachments.length + 1).padStart(2, '0')}-${name}.png`);
  const body = await page.screenshot({ path, fullPage: true, animations: 'disabled', caret: 'hide' });
  await testInfo.attach(name, { body, contentType: 'image/png' });
}
