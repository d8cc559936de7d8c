import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { CHILD_TIMEOUT_MS, childDatabaseEnv } from '../helpers/db';
import { awayFromWindowEdge } from '../helpers/window-edge';
import type { PasswordAttempt, PasswordResult } from './support/password-sign-in';

/**
 * Password sign-in end to end through next-auth's route handlers and this app's
 * `authorize` (server/auth/next-auth.ts), in a child process: the limit on next-auth's own
 * /api/auth/callback/credentials (the forms' server actions reach the same `authorize`;
 * e2e/sign-in.spec.ts drives them in a browser), its 429, and what a failure logs.
 * The limit's cases are in sign-in-limit.test.ts.
 */

function signIn(attempts: PasswordAttempt[]): PasswordResult[] {
  const { DATABASE_URL: _d, REDIS_URL: _r, ...env } = process.env;
  const run = spawnSync(
    process.execPath,
    ['--import', './tests/helpers/server-only-hook.mjs', '--import', 'tsx', 'tests/server/support/password-sign-in.ts', JSON.stringify(attempts)],
    {
      encoding: 'utf8',
      timeout: CHILD_TIMEOUT_MS,
      env: {
        ...env,
        ...childDatabaseEnv(),
        NODE_ENV: 'production',
        AUTH_SECRET: 'test-secret-that-is-at-least-32-characters-long',
        RATE_LIMIT_STORE: 'memory',
        TRUSTED_PROXY_HOPS: '1',
        RATE_LIMIT_SIGN_IN_ADDRESS_PER_WINDOW: '3',
        RATE_LIMIT_SIGN_IN_ACCOUNT_PER_WINDOW: '5',
        // Hour-long windows (four hours for accounts, a multiple): a boundary rarely falls
        // within a run, so the test seldom waits for one (with 60 s windows it waited up to 25 s).
        RATE_LIMIT_SIGN_IN_ADDRESS_WINDOW_SECONDS: '3600',
        RATE_LIMIT_SIGN_IN_ACCOUNT_WINDOW_SECONDS: '14400',
      },
    },
  );
  expect(run.status, run.stderr).toBe(0);
  return JSON.parse(run.stdout.trim().split('\n').at(-1)!) as PasswordResult[];
}

const wrong = (from: string, email = 'victim@example.com'): PasswordAttempt => ({ from, email, password: 'not the password' });
const right = (from: string): PasswordAttempt => ({ from, email: 'victim@example.com', password: 'victim password' });

describe('password sign-in through next-auth', () => {
  it('limits failed attempts on the credentials callback per address and per account, refusing before any hash', async () => {
    // The child needs a few seconds: started well before the address window's boundary.
    await awayFromWindowEdge(3600, 25_000);
    const results = signIn([
      right('203.0.113.9'), // the owner, from home
      wrong('192.0.2.1'),
      wrong('192.0.2.1', 'nobody@example.com'),
      wrong('192.0.2.1'),
      right('192.0.2.1'), // the address is out of attempts: even the right password is refused
      wrong('192.0.2.2'),
      wrong('192.0.2.3'),
      right('192.0.2.4'), // four failures on the account from other addresses: one left
      wrong('192.0.2.5'), // the fifth
      right('192.0.2.6'), // the account is out of attempts from a new address
      right('203.0.113.9'), // but not from the owner's
    ]);
    const summary = results.map((r) => `${r.status} ${r.compares}`);
    expect(summary).toEqual(['302 1', '302 1', '302 1', '302 1', '429 0', '302 1', '302 1', '302 1', '302 1', '429 0', '302 1']);
    for (const i of [0, 7, 10]) expect(results[i]!.session, `attempt ${i}`).toBe(true);
    for (const i of [1, 2, 3, 5, 6, 8]) {
      expect(results[i]!.location, `attempt ${i}`).toBe('http://localhost:3000/sign-in?error=CredentialsSignin&code=credentials');
      expect(results[i]!.session).toBe(false);
    }
    for (const i of [4, 9]) {
      const refused = results[i]!;
      expect(refused.session).toBe(false);
      expect(Number(refused.retryAfter)).toBeGreaterThanOrEqual(1);
      expect(refused.body).toContain(`Too many failed sign-in attempts. Try again in`);
    }
    // Attempt 9 came from a fresh address, so the account's limit refused it: its Retry-After
    // runs to the end of the account's window (four hours here). Windows are counted from
    // fixed boundaries, so it may be any time up to that (CI once saw 36 s): no lower bound.
    expect(Number(results[9]!.retryAfter)).toBeLessThanOrEqual(14_400);
  }, CHILD_TIMEOUT_MS + 30_000);

  it('logs one line per failed sign-in: no stack, no e-mail address', () => {
    const results = signIn([wrong('192.0.2.10'), wrong('192.0.2.10', 'someone.else@example.com'), wrong('192.0.2.10'), wrong('192.0.2.10')]);
    for (const r of results) {
      expect(r.logged).toHaveLength(1);
      const [line] = r.logged;
      expect(line).not.toMatch(/\n|\bat \S+ \(|@example\.com|victim|someone/);
    }
    const entry = (i: number) => JSON.parse(results[i]!.logged[0]!) as Record<string, unknown>;
    expect(entry(0)).toMatchObject({ level: 'warn', msg: 'password sign-in failed: wrong e-mail or password' });
    expect(entry(0)).not.toHaveProperty('retry_after_s');
    expect(entry(3)).toMatchObject({ level: 'warn', msg: 'password sign-in refused: too many failed attempts', retry_after_s: expect.any(Number) });
  }, CHILD_TIMEOUT_MS + 5_000);
});
