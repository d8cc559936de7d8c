import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { CHILD_TIMEOUT_MS, childDatabaseEnv } from '../helpers/db';
import type { Attempt, GitHubAccount } from './support/github-sign-in';

/**
 * GitHub sign-in end to end through next-auth's route handlers and this app's callbacks
 * (server/auth/next-auth.ts), in a child process with GitHub stood in for: the wiring
 * of resolveGitHubSignIn, whose cases are in oauth-accounts.test.ts.
 */

interface Outcome {
  results: Attempt[];
  links: { provider_account_id: string; user_id: string }[];
  users: { id: string; email: string }[];
  events: { kind: string; actor_label: string; subject_user_id: string; user_agent: string | null; details: Record<string, unknown> | null }[];
}

function signInWithGitHub(accounts: GitHubAccount[]): Outcome {
  // The child uses its own in-memory database, as tests/reliability/web-security.test.ts does.
  const { DATABASE_URL: _d, REDIS_URL: _r, ...env } = process.env;
  const run = spawnSync(process.execPath, ['--import', './tests/helpers/server-only-hook.mjs', '--import', 'tsx', 'tests/server/support/github-sign-in.ts', JSON.stringify(accounts)], {
    encoding: 'utf8',
    timeout: CHILD_TIMEOUT_MS,
    env: {
      ...env,
      ...childDatabaseEnv(),
      AUTH_SECRET: 'test-secret-that-is-at-least-32-characters-long',
      AUTH_GITHUB_ID: 'stand-in-client-id',
      AUTH_GITHUB_SECRET: 'stand-in-client-secret',
    },
  });
  expect(run.status, run.stderr).toBe(0);
  return JSON.parse(run.stdout.trim().split('\n').at(-1)!) as Outcome;
}

describe('GitHub sign-in through next-auth', () => {
  it('refuses an address that belongs to an existing user, and the same GitHub id keeps its user when its address changes', () => {
    const { results, links, users } = signInWithGitHub([
      { id: 1001, email: 'Victim@Example.com', name: 'Mallory' },
      { id: 2002, email: 'newcomer@example.com', name: null },
      { id: 2002, email: 'victim@example.com', name: 'Newcomer' },
    ]);
    const [takeover, first, changed] = results;

    // No session, back to the sign-in page with the code it explains.
    expect(takeover!.session).toBeNull();
    expect(takeover!.location).toBe('http://localhost:3000/sign-in?error=OAuthAccountNotLinked');

    const victim = users.find((u) => u.email === 'victim@example.com')!;
    const newcomer = users.find((u) => u.email === 'newcomer@example.com')!;
    expect(first!.location).toBe('http://localhost:3000/settings/api-keys');
    expect(first!.session?.user).toMatchObject({ id: newcomer.id, email: 'newcomer@example.com' });

    // Now claiming the victim's address at GitHub: still the newcomer, never the victim.
    expect(changed!.session?.user).toMatchObject({ id: newcomer.id, email: 'newcomer@example.com' });
    expect(changed!.session?.user?.id).not.toBe(victim.id);

    expect(links).toEqual([{ provider_account_id: '2002', user_id: newcomer.id }]);
    expect(users.map((u) => u.email)).toEqual(['newcomer@example.com', 'victim@example.com']);
  }, CHILD_TIMEOUT_MS + 5_000);

  it("writes a GitHub sign-up, each sign-in and the sign-out after it to the person's security log with the browser that did it", () => {
    const { users, events } = signInWithGitHub([
      { id: 1001, email: 'Victim@Example.com', name: 'Mallory' }, // refused: nothing in anyone's log as a sign-in
      { id: 4004, email: 'logged@example.com', name: 'Logged' },
    ]);
    const logged = users.find((u) => u.email === 'logged@example.com')!;
    // The refused attempt left nothing in the victim's log.
    const victim = users.find((u) => u.email === 'victim@example.com')!;
    expect(events.filter((e) => e.subject_user_id === victim.id && e.kind !== 'sign_up')).toEqual([]);
    expect(events.filter((e) => e.subject_user_id === logged.id)).toEqual([
      { kind: 'sign_up', actor_label: 'logged@example.com', subject_user_id: logged.id, user_agent: 'GitHubSignInTest/1.0', details: { method: 'github' } },
      { kind: 'sign_in.succeeded', actor_label: 'logged@example.com', subject_user_id: logged.id, user_agent: 'GitHubSignInTest/1.0', details: { method: 'github' } },
      { kind: 'sign_out.everywhere', actor_label: 'logged@example.com', subject_user_id: logged.id, user_agent: 'GitHubSignInTest/1.0', details: null },
    ]);
  }, CHILD_TIMEOUT_MS + 5_000);

  it('takes only an address GitHub has verified: an unverified one creates no account', () => {
    const { results, links, users } = signInWithGitHub([
      { id: 3003, email: 'not-yet-theirs@example.com', name: 'Squatter', verified: false },
      { id: 3003, email: 'not-yet-theirs@example.com', name: 'Squatter', verified: true },
    ]);
    const [unverified, verified] = results;
    expect(unverified!.session).toBeNull();
    expect(unverified!.location).toBe('http://localhost:3000/sign-in?error=OAuthNoEmail');
    // Once GitHub has verified it, the same account signs in and gets its user.
    expect(verified!.session?.user).toMatchObject({ email: 'not-yet-theirs@example.com' });
    expect(links.map((l) => l.provider_account_id)).toEqual(['3003']);
    expect(users.map((u) => u.email)).toContain('not-yet-theirs@example.com');
  }, CHILD_TIMEOUT_MS + 5_000);
});
