import { expect, test, type Page } from '@playwright/test';
import { DEMO_USERS } from '@/db/seed/demo';
import { API } from './support/api';
import { snapshot } from './support/artifacts';
import { mintKey, signInOverHttp } from './support/session';

/**
 * /docs/api in Debian's Chromium (issue 16): the Scalar reference served by the app itself,
 * with every request to another host refused and every Content-Security-Policy violation
 * counted, then "Test Request" with a key minted through the app, and a check that the key
 * was kept nowhere (storage, IndexedDB, cookies, a reload).
 */

type Json = Record<string, unknown>;

// Scalar renders each section when it is scrolled to; on a shared two-core machine that can
// take several seconds.
const expectSoon = expect.configure({ timeout: 20_000 });

interface Guard {
  /** Requests the page tried to send to another origin (all refused). */
  foreign: string[];
  /** CSP violations, from the console and from securitypolicyviolation events. */
  violations: string[];
}

/** Refuses every request that leaves the app's origin and records CSP violations. */
async function guardPage(page: Page, baseURL: string): Promise<Guard> {
  const origin = new URL(baseURL).origin;
  const guard: Guard = { foreign: [], violations: [] };
  await page.route('**/*', (route) => {
    const url = route.request().url();
    if (url.startsWith('data:') || url.startsWith('blob:') || new URL(url).origin === origin) return route.continue();
    guard.foreign.push(url);
    return route.abort('blockedbyclient');
  });
  // The browser reports a violation as an event even when the script catches the error.
  await page.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (event) => {
      console.error(`CSP violation: ${event.violatedDirective} blocked ${event.blockedURI || '(inline)'}`);
    });
  });
  page.on('console', (message) => {
    if (/CSP violation|Content.Security.Policy|Refused to (load|execute|evaluate|apply|connect|frame)/i.test(message.text())) {
      guard.violations.push(message.text());
    }
  });
  return guard;
}

/**
 * Waits for Scalar to have parsed the document and rendered its introduction: 2 to 5 s on an
 * idle two-core machine, over 30 s when other builds share it (the bundle is 3.5 MB and the
 * document is processed in the browser).
 */
async function waitForReference(page: Page) {
  await expectSoon(page.getByRole('heading', { name: 'Contract Data API', level: 1 })).toBeVisible({ timeout: 60_000 });
}

function expectClean(guard: Guard) {
  expect(guard.foreign, 'requests to other hosts').toEqual([]);
  expect(guard.violations, 'Content-Security-Policy violations').toEqual([]);
}

async function servedDocument(page: Page): Promise<Json> {
  const res = await page.request.get(`${API}/openapi.json`);
  expect(res.status()).toBe(200);
  return (await res.json()) as Json;
}

function operationsOf(doc: Json): { method: string; path: string; summary: string }[] {
  return Object.entries(doc.paths as Record<string, Record<string, Json>>).flatMap(([path, item]) =>
    Object.entries(item).map(([method, op]) => ({ method, path, summary: String(op.summary) })),
  );
}

test('the reference renders every operation, schema and code sample from this origin alone, under the CSP', async ({ page, baseURL }, testInfo) => {
  const guard = await guardPage(page, baseURL!);
  const doc = await servedDocument(page);
  // Every operation and model is visited in turn (about 150 s on a slow two-core machine
  // beside the other worker): time for twice that.
  test.setTimeout(360_000);
  const bundle = page.waitForResponse((res) => /\/docs\/api\/assets\/scalar-api-reference-[\d.]+\.js$/.test(res.url()), { timeout: 60_000 });
  await page.goto('/docs/api');
  expect((await bundle).status(), 'the bundle is served by the app').toBe(200);
  await waitForReference(page);

  // Scalar renders sections as they come into view: go to each one as a reader would.
  const sidebar = page.getByRole('navigation', { name: /^Sidebar for / });
  for (const operation of operationsOf(doc)) {
    await sidebar.getByRole('button', { name: `${operation.summary} HTTP Method: ${operation.method.toUpperCase()}` }).click();
    const region = page.getByRole('region', { name: operation.summary, exact: true });
    await expectSoon(region.getByRole('heading', { name: operation.summary, exact: true }), operation.summary).toBeVisible();
    for (const status of Object.keys((doc.paths as Record<string, Record<string, Json>>)[operation.path]![operation.method]!.responses as Json)) {
      await expectSoon(region.getByRole('tab', { name: `Status: ${status}`, exact: true }), `${operation.summary}: response ${status}`).toBeVisible();
    }
    await expectSoon(region.getByRole('button', { name: `Test Request (${operation.method} ${operation.path})` })).toBeVisible();
  }
  for (const [name, schema] of Object.entries((doc.components as Json).schemas as Record<string, Json>)) {
    await sidebar.getByRole('button', { name, exact: true }).click();
    const region = page.getByRole('region', { name, exact: true });
    await expectSoon(region.getByRole('heading', { name, exact: true }), `model ${name}`).toBeVisible();
    // An object shows its properties; an enum (ErrorCode) its values.
    for (const property of Object.keys((schema.properties as Json | undefined) ?? {})) {
      await expectSoon(region.getByText(property, { exact: true }).first(), `model ${name}: ${property}`).toBeVisible();
    }
    for (const value of (schema.enum as string[] | undefined) ?? []) {
      await expectSoon(region.getByText(value).first(), `model ${name}: ${value}`).toBeVisible();
    }
  }

  // One operation in detail: its parameters, its response example and its code samples.
  await sidebar.getByRole('button', { name: 'List contracts HTTP Method: GET' }).click();
  const list = page.getByRole('region', { name: 'List contracts', exact: true });
  const parameters = ((doc.paths as Record<string, Record<string, Json>>)['/contracts']!.get!.parameters as { name: string }[]).map((p) => p.name);
  expect(parameters).toContain('renewing_within_days');
  for (const name of parameters) {
    await expectSoon(list.getByRole('button', { name: `Copy link to ${name}`, exact: true }), `parameter ${name}`).toBeAttached();
  }
  await expectSoon(list.getByText('"pagination"').first(), 'the 200 example shows the response shape').toBeVisible();
  const samples = list.getByRole('group', { name: 'Request Example for get/contracts' });
  await expectSoon(samples.getByText('X-API-Key: $CDAPI_KEY')).toBeVisible();
  await samples.getByRole('button', { name: 'curl' }).click();
  for (const label of ['curl', 'JavaScript (fetch)', 'TypeScript (typed client)', 'Python (requests)']) {
    await expectSoon(page.getByRole('option', { name: label, exact: true }), `sample ${label}`).toBeVisible();
  }
  await page.getByRole('option', { name: 'TypeScript (typed client)', exact: true }).click();
  await expect(samples.getByText("import { createContractDataClient } from '@contract-data-api/client';")).toBeVisible();
  // The viewport: the whole page is every section rendered so far, tens of thousands of pixels.
  await snapshot(page, testInfo, 'list-contracts', { fullPage: false });
  expectClean(guard);
});

test('"Test Request" lists contracts with a key minted through the app, and the key is kept nowhere', async ({ page, baseURL, playwright }, testInfo) => {
  const session = await playwright.request.newContext({ baseURL });
  await signInOverHttp(session, DEMO_USERS.alice.email);
  const { key } = await mintKey(session, 'e2e reference try-it');
  await session.dispose();

  test.setTimeout(180_000);
  const guard = await guardPage(page, baseURL!);
  await page.goto('/docs/api');
  await waitForReference(page);
  const openClient = async () => {
    await page.getByRole('navigation', { name: /^Sidebar for / }).getByRole('button', { name: 'List contracts HTTP Method: GET' }).click();
    await page.getByRole('button', { name: 'Test Request (get /contracts)' }).click();
  };
  await openClient();
  const client = page.getByRole('dialog');
  await client.getByRole('textbox', { name: 'Value' }).fill(key);

  const answer = page.waitForResponse((res) => new URL(res.url()).pathname === `${API}/contracts` && res.request().method() === 'GET');
  await client.getByRole('button', { name: /^Send get request/ }).click();
  const response = await answer;
  expect(response.status()).toBe(200);
  expect(new URL(response.url()).origin, 'sent to this server, not through a proxy').toBe(new URL(baseURL!).origin);
  expect(response.request().headers()['x-api-key']).toBe(key);
  await expectSoon(client.getByText('200 OK').first()).toBeVisible();
  await expectSoon(client.getByText('"contracts"').first(), 'the response body is shown').toBeVisible();
  const body = (await response.json()) as { data: { contracts: unknown[] } };
  expect(body.data.contracts.length).toBeGreaterThan(0);
  await snapshot(page, testInfo, 'try-it-200');

  // Nothing the browser keeps holds the key.
  const kept = await page.evaluate(async () => {
    const stores: string[] = [];
    for (const storage of [localStorage, sessionStorage]) {
      for (let i = 0; i < storage.length; i++) stores.push(`${storage.key(i)}=${storage.getItem(storage.key(i)!)}`);
    }
    for (const info of await indexedDB.databases()) {
      const db = await new Promise<IDBDatabase>((resolve, reject) => {
        const open = indexedDB.open(info.name!);
        open.onsuccess = () => resolve(open.result);
        open.onerror = () => reject(open.error);
      });
      for (const name of Array.from(db.objectStoreNames)) {
        const rows = await new Promise<unknown[]>((resolve, reject) => {
          const all = db.transaction(name, 'readonly').objectStore(name).getAll();
          all.onsuccess = () => resolve(all.result);
          all.onerror = () => reject(all.error);
        });
        stores.push(`${info.name}/${name}=${JSON.stringify(rows)}`);
      }
      db.close();
    }
    return stores;
  });
  expect(kept.filter((entry) => entry.includes(key)), 'storage entries holding the key').toEqual([]);
  const cookies = await page.context().cookies();
  expect(cookies.filter((c) => c.value.includes(key) || decodeURIComponent(c.value).includes(key))).toEqual([]);

  // After a reload the key has to be typed again.
  await page.reload();
  await waitForReference(page);
  await openClient();
  await expectSoon(page.getByRole('dialog').getByRole('textbox', { name: 'Value' })).toHaveValue('');
  expectClean(guard);
});

test('the header and Settings → API Keys link to the reference', async ({ page }) => {
  test.setTimeout(120_000);
  await page.goto('/');
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'API reference' }).click();
  await expect(page).toHaveURL(/\/docs\/api(#.*)?$/);
  await waitForReference(page);

  await signInOverHttp(page.request, DEMO_USERS.alice.email);
  await page.goto('/settings/api-keys');
  await page.getByRole('main').getByRole('link', { name: 'API reference' }).click();
  await expect(page).toHaveURL(/\/docs\/api(#.*)?$/);
});

test('the bundle is served by the app, versioned, cached for a year and without the eval probe', async ({ request }) => {
  const page = await request.get('/docs/api');
  const url = /\/docs\/api\/assets\/scalar-api-reference-[\d.]+\.js/.exec(await page.text())?.[0];
  expect(url, 'the page names the bundle').toBeTruthy();
  const res = await request.get(url!);
  expect(res.status()).toBe(200);
  expect(res.headers()['content-type']).toBe('text/javascript; charset=utf-8');
  expect(res.headers()['cache-control']).toBe('public, max-age=31536000, immutable');
  const body = await res.text();
  expect(body.length).toBeGreaterThan(1_000_000);
  expect(body).not.toContain('new Function("")');
  const again = await request.get(url!, { headers: { 'If-None-Match': res.headers().etag! } });
  expect(again.status()).toBe(304);
  expect((await request.get('/docs/api/assets/scalar-api-reference-0.0.0.js')).status()).toBe(404);
});
