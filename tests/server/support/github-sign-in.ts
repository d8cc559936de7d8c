/**
 * GitHub sign-in through next-auth's own route handlers, with GitHub played by a stand-in
 * for `fetch` (the token exchange and the profile). Prints, for each attempt, where the
 * callback redirected and whose session it opened. Run as a separate process, as
 * tests/reliability/support/session-cookie.ts is (next-auth does not load in vitest):
 *
 *   node --import ./tests/helpers/server-only-hook.mjs --import tsx tests/server/support/github-sign-in.ts '[{"id":1001,"email":"a@example.com","name":"A"}]'
 *
 * A user victim@example.com with a password exists before the first attempt.
 */
import { setProcessDatabase } from '@/server/database';
import { createUserWithPassword } from '@/server/auth/users';
import { openChildPglite } from '../../helpers/child-database';

export interface GitHubAccount {
  id: number;
  email: string | null;
  name: string | null;
  /** Whether GitHub has verified the address (default true). */
  verified?: boolean;
}

export interface Attempt {
  status: number;
  location: string | null;
  session: { user?: { id?: string; email?: string; name?: string | null } } | null;
}

const BASE = 'http://localhost:3000';
const USER_AGENT = 'GitHubSignInTest/1.0';
const accounts = JSON.parse(process.argv[2] ?? '[]') as GitHubAccount[];

const handle = await openChildPglite();
setProcessDatabase(handle);
await createUserWithPassword(handle.db, { email: 'victim@example.com', password: 'victim password' });

// GitHub: the token endpoint and the profile of the account of the current attempt.
let current: GitHubAccount | undefined;
const realFetch = globalThis.fetch;
globalThis.fetch = async (input: RequestInfo | URL, init?: RequestInit) => {
  const url = new URL(input instanceof Request ? input.url : String(input));
  if (url.href === 'https://github.com/login/oauth/access_token') {
    return Response.json({ access_token: 'gho_stand_in', token_type: 'bearer', scope: 'read:user,user:email' });
  }
  if (url.href === 'https://api.github.com/user') {
    return Response.json({ id: current!.id, login: `user${current!.id}`, name: current!.name, email: current!.email, avatar_url: null });
  }
  if (url.href === 'https://api.github.com/user/emails') {
    const a = current!;
    return Response.json(a.email ? [{ email: a.email, primary: true, verified: a.verified ?? true, visibility: null }] : []);
  }
  return realFetch(input, init);
};

// The app's handlers (as /api/auth/* serves them), not next-auth's bare ones.
const { routeHandlers: handlers } = await import('@/server/auth/next-auth');
const { NextRequest } = await import('next/server');

/** Cookies as a browser keeps them: name=value, the latest wins. */
class Jar {
  private readonly cookies = new Map<string, string>();
  take(res: Response) {
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const at = pair!.indexOf('=');
      this.cookies.set(pair!.slice(0, at), pair!.slice(at + 1));
    }
  }
  header() {
    return [...this.cookies].filter(([, v]) => v !== '').map(([k, v]) => `${k}=${v}`).join('; ');
  }
  has(pattern: RegExp) {
    return [...this.cookies].some(([k, v]) => pattern.test(k) && v !== '');
  }
}

const results: Attempt[] = [];
for (const account of accounts) {
  current = account;
  const jar = new Jar();
  const csrf = await handlers.GET(new NextRequest(`${BASE}/api/auth/csrf`));
  jar.take(csrf);
  const { csrfToken } = (await csrf.json()) as { csrfToken: string };
  const start = await handlers.POST(
    new NextRequest(`${BASE}/api/auth/signin/github`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', Cookie: jar.header() },
      body: new URLSearchParams({ csrfToken, callbackUrl: `${BASE}/settings/api-keys` }),
    }),
  );
  jar.take(start);
  const authorize = new URL(start.headers.get('location')!);
  if (authorize.origin !== 'https://github.com') throw new Error(`sign-in did not go to GitHub: ${authorize.href}`);
  const callback = new URL(`${BASE}/api/auth/callback/github`);
  callback.searchParams.set('code', 'stand-in-code');
  const state = authorize.searchParams.get('state');
  if (state) callback.searchParams.set('state', state);
  const res = await handlers.GET(new NextRequest(callback, { headers: { Cookie: jar.header(), 'User-Agent': USER_AGENT } }));
  jar.take(res);
  let session: Attempt['session'] = null;
  if (jar.has(/session-token/)) {
    const s = await handlers.GET(new NextRequest(`${BASE}/api/auth/session`, { headers: { Cookie: jar.header() } }));
    session = (await s.json()) as Attempt['session'];
    // And signs out again (the next attempt starts signed out): the security log's sign-out.
    const out = await handlers.POST(
      new NextRequest(`${BASE}/api/auth/signout`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded', Cookie: jar.header(), 'User-Agent': USER_AGENT },
        body: new URLSearchParams({ csrfToken }),
      }),
    );
    if (out.status !== 302) throw new Error(`sign-out answered ${out.status}`);
  }
  results.push({ status: res.status, location: res.headers.get('location'), session });
}

const links = await handle.query<{ provider_account_id: string; user_id: string }>(
  'SELECT provider_account_id, user_id FROM oauth_accounts ORDER BY provider_account_id',
);
const users = await handle.query<{ id: string; email: string }>('SELECT id, email FROM users ORDER BY email');
const events = await handle.query<{ kind: string; actor_label: string; subject_user_id: string; user_agent: string | null; details: Record<string, unknown> | null }>(
  "SELECT kind, actor_label, subject_user_id, user_agent, details FROM security_events WHERE kind IN ('sign_up', 'sign_in.succeeded', 'sign_out.everywhere') ORDER BY id",
);
process.stdout.write(`${JSON.stringify({ results, links, users, events })}\n`);
await handle.close();
