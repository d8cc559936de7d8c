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
  const created = await trpcMutation<{ key: string; apiKey: { id: string; name: string; hint: string } }>(
    api,
    'apiKeys.create',
    { name, expiresInDays },
  );
  return { id: created.apiKey.id, name: created.apiKey.name, hint: created.apiKey.hint, key: created.key };
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
