/**
 * Password sign-in through next-auth's own route handlers (the app's POST, which answers a
 * refusal of the limit with 429), as a browser or a script posts to
 * /api/auth/callback/credentials. Counts bcrypt comparisons and keeps everything the
 * process logs. Run as a separate process (next-auth does not load in vitest):
 *
 *   node --import ./tests/helpers/server-only-hook.mjs --import tsx tests/server/support/password-sign-in.ts '[{"from":"192.0.2.1","email":"a@example.com","password":"x"}]'
 *
 * The environment sets TRUSTED_PROXY_HOPS=1, so `from` is the client's address as a proxy
 * in front would append it to X-Forwarded-For. A user victim@example.com with the password
 * "victim password" exists before the first attempt.
 */
import { Writable } from 'node:stream';
import bcrypt from 'bcrypt';
import { setLogDestination } from '@/server/observability/logger';
import { setProcessDatabase } from '@/server/database';
import { createUserWithPassword } from '@/server/auth/users';
import { openChildPglite } from '../../helpers/child-database';

export interface PasswordAttempt {
  from: string;
  email: string;
  password: string;
}

export interface PasswordResult {
  status: number;
  location: string | null;
  retryAfter: string | null;
  body: string;
  session: boolean;
  /** bcrypt comparisons this attempt made. */
  compares: number;
  /** What the process logged during this attempt. */
  logged: string[];
}

const BASE = 'http://localhost:3000';
const attempts = JSON.parse(process.argv[2] ?? '[]') as PasswordAttempt[];

const handle = await openChildPglite();
setProcessDatabase(handle);
await createUserWithPassword(handle.db, { email: 'victim@example.com', password: 'victim password' });

let compares = 0;
const realCompare = bcrypt.compare.bind(bcrypt) as (data: string, encrypted: string) => Promise<boolean>;
(bcrypt as { compare: unknown }).compare = (data: string, encrypted: string) => {
  compares += 1;
  return realCompare(data, encrypted);
};

let logged: string[] = [];
for (const level of ['log', 'info', 'warn', 'error', 'debug'] as const) {
  console[level] = (...args: unknown[]) => {
    logged.push(args.map((a) => (a instanceof Error ? (a.stack ?? a.message) : typeof a === 'string' ? a : JSON.stringify(a))).join(' '));
  };
}
// The logger's JSON lines too (one per write).
setLogDestination(
  new Writable({
    write(chunk: Buffer, _encoding, done) {
      logged.push(String(chunk).trimEnd());
      done();
    },
  }),
  'trace',
);

const { routeHandlers } = await import('@/server/auth/next-auth');
const { NextRequest } = await import('next/server');

const results: PasswordResult[] = [];
for (const attempt of attempts) {
  compares = 0;
  logged = [];
  const forwarded = { 'X-Forwarded-For': attempt.from };
  const csrf = await routeHandlers.GET(new NextRequest(`${BASE}/api/auth/csrf`, { headers: forwarded }));
  const cookie = csrf.headers
    .getSetCookie()
    .map((line) => line.split(';')[0])
    .join('; ');
  const { csrfToken } = (await csrf.json()) as { csrfToken: string };
  const res = await routeHandlers.POST(
    new NextRequest(`${BASE}/api/auth/callback/credentials`, {
      method: 'POST',
      headers: { ...forwarded, 'Content-Type': 'application/x-www-form-urlencoded', Cookie: cookie },
      body: new URLSearchParams({ csrfToken, email: attempt.email, password: attempt.password, callbackUrl: `${BASE}/settings/api-keys` }),
    }),
  );
  results.push({
    status: res.status,
    location: res.headers.get('location'),
    retryAfter: res.headers.get('retry-after'),
    body: res.status === 429 ? await res.text() : '',
    session: res.headers.getSetCookie().some((line) => /session-token=[^;]/.test(line)),
    compares,
    logged,
  });
}

process.stdout.write(`${JSON.stringify(results)}\n`);
await handle.close();
