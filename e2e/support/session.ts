import { expect, type APIRequestContext, type Page } from '@playwright/test';
import { DEMO_PASSWORD } from '@/db/seed/demo';

/**
 * Signing in and minting API keys the way a browser would: next-auth's credentials
 * callback for the session cookie, then the app's own tRPC endpoint (session-
 * authenticated). Works on both database drivers: nothing opens the database besides
 * the server, which PGlite (one process per directory) requires.
 */

export interface MintedKey {
  id: string;
  name: string;
  hint: string;
  key: string;
}

/** Signs `api` in over HTTP; its cookie jar then holds the session cookie. */
export async function signInOverHttp(api: APIRequestContext, email: string, password = DEMO_PASSWORD): Promise<void> {
  const csrf = await api.get('/api/auth/csrf');
  expect(csrf.status(), 'GET /api/auth/csrf').toBe(200);
  const { csrfToken } = (await csrf.json()) as { csrfToken: string };
  const callback = await api.post('/api/auth/callback/credentials', {
    form: { csrfToken, email, password, callbackUrl: '/' },
    // The redirect target is not needed, only the cookie set on this response.
    maxRedirects: 0,
  });
  expect(callback.status(), 'credentials callback redirects').toBe(302);
  expect(callback.headers().location ?? '', 'credentials callback succeeded').not.toContain('error=');
  const { cookies } = await api.storageState();
  expect(
    cookies.some((c) => c.name.endsWith('authjs.session-token')),
    `session cookie for ${email}`,
  ).toBe(true);
}

async function trpcMutation<T>(api: APIRequestContext, procedure: string, input: unknown): Promise<T> {
  const res = await api.post(`/api/trpc/${procedure}`, { data: input });
  const text = await res.text();
  expect(res.status(), `${procedure}: ${text}`).toBe(200);
  return (JSON.parse(text) as { result: { data: T } }).result.data;
}

/** Creates a key for the signed-in user through `apiKeys.create`. */
export async function mintKey(
  api: APIRequestContext,
  name: string,
  expiresInDays: 7 | 30 | 90 | 365 | null = 90,
): Promise<MintedKey> {
  const created = await trpcMutation<{ secret: string; token: { id: string; name: string; hint: string } }>(
    api,
    'apiKeys.create',
    { name, expiresInDays },
  );
  return { id: created.token.id, name: created.token.name, hint: created.token.hint, key: created.secret };
}

/** Creates a calendar feed for the signed-in user through `calendarFeeds.create`; returns its token. */
export async function createFeedToken(api: APIRequestContext, name: string): Promise<string> {
  return (await createFeed(api, name)).token;
}

/** Creates a calendar feed for the signed-in user; its token and id (to revoke it). */
export async function createFeed(api: APIRequestContext, name: string): Promise<{ id: string; token: string }> {
  const created = await trpcMutation<{ url: string; token: { id: string } }>(api, 'calendarFeeds.create', { name });
  const token = /\/calendar\/([^/]+)\.ics$/.exec(new URL(created.url).pathname)?.[1];
  expect(token, `feed token in ${created.url}`).toBeTruthy();
  return { id: created.token.id, token: token! };
}

/** Revokes one of the signed-in user's calendar feeds through `calendarFeeds.revoke`. */
export async function revokeFeed(api: APIRequestContext, id: string): Promise<void> {
  await trpcMutation(api, 'calendarFeeds.revoke', { id });
}

/** Revokes one of the signed-in user's keys through `apiKeys.revoke`. */
export async function revokeKey(api: APIRequestContext, id: string): Promise<void> {
  await trpcMutation(api, 'apiKeys.revoke', { id });
}

/** Signs in through the sign-in form of the page currently shown. */
export async function fillSignInForm(page: Page, email: string, password: string): Promise<void> {
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
}
