import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect, test, type Page } from '@playwright/test';
import postgres from 'postgres';
import { Webhook } from 'standardwebhooks';
import { DEMO_USERS } from '@/db/seed/demo';
import { snapshot } from './support/artifacts';
import { signInOverHttp } from './support/session';

/**
 * Settings → Webhooks in Debian's Chromium (issue 18): add an endpoint for a receiver on
 * this machine, see its signing secret once, send a test event that the receiver gets and
 * verifies with the official `standardwebhooks` library, read the delivery log, resend,
 * rotate the secret (both signatures meanwhile), pause and resume, delete. The server runs
 * with WEBHOOK_ALLOW_PRIVATE_URLS=true (playwright.config.ts) so that it may call 127.0.0.1.
 */

const CAROL = DEMO_USERS.carol;
const SECRET = /^whsec_[A-Za-z0-9+/]{43}=$/;

interface Received {
  headers: IncomingHttpHeaders;
  body: string;
}

test.use({ permissions: ['clipboard-read', 'clipboard-write'] });

const addButton = (page: Page) => page.getByRole('button', { name: 'Add endpoint', exact: true });

async function waitForHydration(page: Page): Promise<void> {
  await expect
    .poll(() => addButton(page).evaluate((el) => Object.keys(el).some((k) => k.startsWith('__reactProps'))), { message: 'the webhooks page hydrates' })
    .toBe(true);
}

function verified(secret: string, request: Received) {
  return new Webhook(secret).verify(request.body, {
    'webhook-id': String(request.headers['webhook-id']),
    'webhook-timestamp': String(request.headers['webhook-timestamp']),
    'webhook-signature': String(request.headers['webhook-signature']),
  }) as { type: string; data: { contract: { title: string } } };
}

test('add an endpoint, see its secret once, send a test event, read the log, resend, rotate, pause, delete', async ({ page }, testInfo) => {
  const received: Received[] = [];
  const receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(200, { 'content-type': 'text/plain' }).end('thanks from the e2e receiver');
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks/${testInfo.repeatEachIndex}-${testInfo.retry}`;
  let secret = '';
  const endpoint = () => page.getByTestId('webhook-endpoint').filter({ hasText: url });

  try {
    await test.step('the page is in the settings menu and starts empty', async () => {
      await signInOverHttp(page.request, CAROL.email);
      await page.goto('/settings/api-keys');
      await page.getByRole('navigation', { name: 'Settings' }).getByRole('link', { name: 'Webhooks' }).click();
      await expect(page).toHaveURL(/\/settings\/webhooks$/);
      await expect(page.getByRole('heading', { name: 'Webhooks', exact: true })).toBeVisible();
      await waitForHydration(page);
      await snapshot(page, testInfo, 'webhooks-empty');
    });

    await test.step('add an endpoint: a wrong URL is refused in the dialog, then the secret is shown once', async () => {
      await addButton(page).click();
      const dialog = page.getByRole('dialog', { name: 'Add webhook endpoint' });
      await expect(dialog.getByLabel('Endpoint URL')).toBeFocused();
      await dialog.getByLabel('Endpoint URL').fill('ftp://example.com/x');
      await dialog.getByRole('button', { name: 'Add endpoint' }).click();
      await expect(dialog).toContainText('Enter a full URL');
      // The server's own check, shown in the dialog.
      await dialog.getByLabel('Endpoint URL').fill('https://user:password@example.com/x');
      await dialog.getByRole('button', { name: 'Add endpoint' }).click();
      await expect(dialog.getByRole('alert')).toContainText('must not contain a user name or password');
      await dialog.getByLabel('Endpoint URL').fill(url);
      // Not the upcoming-date events: they depend on today's date.
      await dialog.getByRole('checkbox', { name: /contract\.renewal_upcoming/ }).uncheck();
      await dialog.getByRole('checkbox', { name: /contract\.expiration_upcoming/ }).uncheck();
      await dialog.getByRole('checkbox', { name: /contract\.notice_deadline_upcoming/ }).uncheck();
      await expect(dialog.getByLabel('Days before renewal, expiration or notice deadline')).toBeHidden();
      await snapshot(page, testInfo, 'add-endpoint');
      await dialog.getByRole('button', { name: 'Add endpoint' }).click();
      const shown = page.getByRole('dialog', { name: 'Your endpoint’s signing secret' });
      await expect(shown).toBeVisible();
      secret = ((await shown.getByTestId('new-webhook-secret').textContent()) ?? '').trim();
      expect(secret).toMatch(SECRET);
      await shown.getByRole('button', { name: 'Copy' }).click();
      expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(secret);
      await snapshot(page, testInfo, 'secret-shown');
      await shown.getByRole('button', { name: 'I have saved the secret' }).click();
      await expect(shown).toBeHidden();
      await expect(endpoint()).toContainText(`whsec_…${secret.slice(-5, -1)}`);
      await expect(endpoint()).toContainText('Active');
      await page.reload();
      expect(await page.content()).not.toContain(secret.slice(6, 30));
      await waitForHydration(page);
    });

    await test.step('send a test event: the receiver verifies it; the log shows it', async () => {
      await endpoint().getByRole('button', { name: 'Send test event' }).click();
      await expect(endpoint().getByRole('status')).toHaveText('Test event delivered (HTTP 200).');
      expect(received).toHaveLength(1);
      expect(verified(secret, received[0]!).type).toBe('webhook.test');
      const row = endpoint().getByTestId('webhook-delivery-row');
      await expect(row).toHaveCount(1);
      await expect(row).toContainText('webhook.test');
      await expect(row).toContainText('Delivered');
      await expect(row.getByTestId('delivery-status-code')).toHaveText('200');
      await expect(row).toContainText('thanks from the e2e receiver');
      await expect(row).toContainText(String(received[0]!.headers['webhook-id']));
      await expect(endpoint().getByTestId('webhook-figures')).toHaveText('1 delivered, 0 failed');
      await snapshot(page, testInfo, 'delivery-log');
    });

    await test.step('a change written with SQL by another connection arrives within 5 s: `next start` delivers by itself (Postgres only)', async () => {
      // The embedded database allows no second connection: tests/webhooks/delivery.test.ts covers it there.
      if (!process.env.DATABASE_URL) return;
      const sql = postgres(process.env.DATABASE_URL!, { max: 1 });
      try {
        const before = received.length;
        const started = Date.now();
        await sql`UPDATE contracts SET title = title || ' (e2e)' WHERE id = (SELECT id FROM contracts WHERE owner_id = ${CAROL.id} AND organization_id IS NULL ORDER BY id LIMIT 1)`;
        await expect.poll(() => received.length, { timeout: 5_000, message: 'the in-process worker delivers' }).toBe(before + 1);
        const event = verified(secret, received.at(-1)!);
        expect(event.type).toBe('contract.updated');
        expect(event.data.contract.title).toMatch(/\(e2e\)$/);
        console.log(`[webhooks e2e] commit to receipt: ${Date.now() - started} ms`);
      } finally {
        await sql.end();
      }
    });

    await test.step('resend: the same webhook-id again', async () => {
      // Only webhook.test rows and receipts count: a retry of another event (the change
      // written with SQL above, on Postgres) may add a request to the receiver meanwhile.
      const testIds = () => received.filter((r) => (JSON.parse(r.body) as { type: string }).type === 'webhook.test').map((r) => r.headers['webhook-id']);
      expect(testIds()).toHaveLength(1);
      await page.reload();
      await waitForHydration(page);
      await endpoint().getByRole('button', { name: 'Show delivery log' }).click();
      // The log loads after the click and its table is rendered only once loaded: wait for
      // it before counting, or the count races the fetch.
      await expect(endpoint().getByRole('table', { name: 'Delivery log' })).toBeVisible();
      const tests = endpoint().getByTestId('webhook-delivery-row').filter({ hasText: 'webhook.test' });
      await expect(tests).toHaveCount(1);
      await tests.first().getByRole('button', { name: 'Resend' }).click();
      await expect(tests).toHaveCount(2);
      await expect.poll(() => testIds().length).toBe(2);
      expect(new Set(testIds()).size).toBe(1);
    });

    await test.step('rotate the secret: the new one is shown once, both sign for 24 hours', async () => {
      await endpoint().getByRole('button', { name: 'Rotate secret' }).click();
      const confirm = page.getByRole('dialog', { name: 'Rotate the signing secret?' });
      await expect(confirm).toContainText('stays valid for 24 hours');
      await confirm.getByRole('button', { name: 'Rotate secret' }).click();
      const shown = page.getByRole('dialog', { name: 'The new signing secret' });
      const fresh = ((await shown.getByTestId('new-webhook-secret').textContent()) ?? '').trim();
      expect(fresh).toMatch(SECRET);
      expect(fresh).not.toBe(secret);
      await shown.getByRole('button', { name: 'I have saved the secret' }).click();
      await expect(endpoint()).toContainText('previous secret valid until');
      await endpoint().getByRole('button', { name: 'Send test event' }).click();
      await expect(endpoint().getByRole('status')).toHaveText('Test event delivered (HTTP 200).');
      const last = received.at(-1)!;
      expect(String(last.headers['webhook-signature']).split(' ')).toHaveLength(2);
      expect(verified(fresh, last).type).toBe('webhook.test');
      expect(verified(secret, last).type).toBe('webhook.test');
    });

    await test.step('pause and resume', async () => {
      await endpoint().getByRole('button', { name: 'Pause' }).click();
      await expect(endpoint()).toContainText('Paused');
      await expect(endpoint().getByRole('button', { name: 'Send test event' })).toBeDisabled();
      await snapshot(page, testInfo, 'paused');
      await endpoint().getByRole('button', { name: 'Resume' }).click();
      await expect(endpoint()).toContainText('Active');
      await expect(endpoint().getByRole('button', { name: 'Send test event' })).toBeEnabled();
    });

    await test.step('delete, after a confirmation that names it', async () => {
      await endpoint().getByRole('button', { name: `Delete ${url}` }).click();
      const confirm = page.getByRole('dialog', { name: 'Delete this endpoint?' });
      await expect(confirm).toContainText(url);
      await confirm.getByRole('button', { name: 'Delete endpoint' }).click();
      await expect(endpoint()).toHaveCount(0);
      await page.reload();
      await expect(endpoint()).toHaveCount(0);
    });
  } finally {
    receiver.closeAllConnections();
    await new Promise((resolve) => receiver.close(resolve));
  }
});

test('the API reference shows every event with its payload and headers, and a receiver in JavaScript and Python', async ({ page, request }) => {
  test.setTimeout(120_000);
  const doc = (await (await request.get('/api/v1/openapi.json')).json()) as { webhooks: Record<string, unknown> };
  await page.goto('/docs/api');
  await expect(page.getByRole('heading', { name: 'Contract Data API', level: 1 })).toBeVisible({ timeout: 60_000 });
  const sidebar = page.getByRole('navigation', { name: /^Sidebar for / });
  for (const type of Object.keys(doc.webhooks)) {
    await sidebar.getByRole('button', { name: `${type} HTTP Method: POST` }).click();
    const region = page.getByRole('region', { name: type, exact: true });
    await expect(region.getByRole('heading', { name: type, exact: true })).toBeVisible({ timeout: 15_000 });
    const headers = region.getByRole('list', { name: 'Headers' });
    for (const header of ['webhook-id', 'webhook-timestamp', 'webhook-signature']) await expect(headers).toContainText(header);
    await expect(region.getByRole('group', { name: `Request Example for post${type}` })).toContainText(`"type": "${type}"`);
  }
  const updated = page.getByRole('region', { name: 'contract.updated', exact: true });
  await sidebar.getByRole('button', { name: 'contract.updated HTTP Method: POST' }).click();
  await expect(updated.getByRole('group', { name: 'Request Example for postcontract.updated' })).toContainText('"changed_fields"');
  // The introduction's Webhooks section, with both receivers.
  await expect(page.getByText("import { Webhook } from 'standardwebhooks'", { exact: false }).first()).toBeAttached();
  await expect(page.getByText('from standardwebhooks.webhooks import Webhook', { exact: false }).first()).toBeAttached();
});
