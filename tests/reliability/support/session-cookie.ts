/**
 * Signs a demo user in through next-auth's own route handlers, once per scenario, and
 * prints each session cookie's Set-Cookie line as JSON. Run as a separate process
 * (node --import tsx): next-auth's ESM build imports `next/server` without an extension,
 * which Node's resolver refuses inside vitest but tsx (like Next.js) resolves.
 *
 *   node --import ./tests/helpers/server-only-hook.mjs --import tsx tests/reliability/support/session-cookie.ts '[{"base":"https://a.example","headers":{}}]'
 */
import { setProcessDatabase } from '@/server/database';
import { DEMO_PASSWORD, DEMO_USERS, seedDemo } from '@/db/seed/demo';
import { openChildPglite } from '../../helpers/child-database';

export interface Scenario {
  base: string;
  headers?: Record<string, string>;
  /** AUTH_URL while this scenario runs (next-auth reads it per request). */
  authUrl?: string;
}

const scenarios = JSON.parse(process.argv[2] ?? '[]') as Scenario[];

const handle = await openChildPglite();
setProcessDatabase(handle);
await seedDemo(handle.db);
const { handlers } = await import('@/server/auth/next-auth');
const { NextRequest } = await import('next/server');

const results: { status: number; session: string | null }[] = [];
for (const { base, headers = {}, authUrl } of scenarios) {
  if (authUrl) process.env.AUTH_URL = authUrl;
  else delete process.env.AUTH_URL;
  const csrf = await handlers.GET(new NextRequest(`${base}/api/auth/csrf`, { headers }));
  const { csrfToken } = (await csrf.json()) as { csrfToken: string };
  const cookie = csrf.headers.getSetCookie().map((c) => c.split(';')[0]).join('; ');
  const res = await handlers.POST(
    new NextRequest(`${base}/api/auth/callback/credentials`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', Cookie: cookie, ...headers },
      body: new URLSearchParams({ csrfToken, email: DEMO_USERS.alice.email, password: DEMO_PASSWORD, callbackUrl: `${base}/settings` }),
    }),
  );
  results.push({ status: res.status, session: res.headers.getSetCookie().find((c) => /session-token=/.test(c)) ?? null });
}
process.stdout.write(`${JSON.stringify(results)}\n`);
await handle.close();
