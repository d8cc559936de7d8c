import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '@/db/client';
import { resolveGitHubSignIn } from '@/server/auth/oauth-accounts';
import { signInErrorMessage } from '@/server/auth/sign-in-errors';
import { authenticateWithPassword, createUserWithPassword } from '@/server/auth/users';
import { createTestDatabase } from '../helpers/db';

/**
 * GitHub sign-in on a real database: the GitHub account id decides who signs in, never
 * the e-mail address GitHub reports (issue 3, account takeover).
 */

let handle: DatabaseHandle;
beforeAll(async () => {
  handle = await createTestDatabase();
});
afterAll(async () => handle?.close());

const links = (githubId: string) =>
  handle.query<{ user_id: string }>(`SELECT user_id FROM oauth_accounts WHERE provider = 'github' AND provider_account_id = $1`, [githubId]);
const usersWithEmail = (email: string) =>
  handle.query<{ id: string; password_hash: string | null; name: string | null }>('SELECT id, password_hash, name FROM users WHERE email = $1', [email]);

describe('GitHub sign-in', () => {
  it('refuses a GitHub account whose e-mail belongs to an existing user, and links nothing', async () => {
    const victim = await createUserWithPassword(handle.db, { email: 'victim@example.com', password: 'victim password' });
    // GitHub reports whatever address its user put on the account, in any case.
    const result = await resolveGitHubSignIn(handle.db, { providerAccountId: '1001', email: ' Victim@Example.COM ', name: 'Mallory' });
    expect(result).toEqual({ refused: 'OAuthAccountNotLinked' });
    expect(await links('1001')).toEqual([]);
    expect(await usersWithEmail('victim@example.com')).toEqual([expect.objectContaining({ id: victim.id })]);
    // The owner still signs in with their password, and the page explains the refusal.
    expect(await authenticateWithPassword(handle.db, 'victim@example.com', 'victim password')).toMatchObject({ id: victim.id });
    expect(signInErrorMessage(result.refused)).toBe('An account with this e-mail already exists. Sign in with your password.');
  });

  it('creates a user without a password on the first sign-in, linked to the GitHub id', async () => {
    const result = await resolveGitHubSignIn(handle.db, { providerAccountId: '2002', email: 'New.User@Example.com', name: '  Newton  ' });
    expect(result.user).toMatchObject({ email: 'new.user@example.com', name: 'Newton' });
    const [row] = await usersWithEmail('new.user@example.com');
    expect(row).toEqual({ id: result.user!.id, password_hash: null, name: 'Newton' });
    expect(await links('2002')).toEqual([{ user_id: result.user!.id }]);
  });

  it('finds the same user on the next sign-in with the same GitHub id', async () => {
    const first = await resolveGitHubSignIn(handle.db, { providerAccountId: '3003', email: 'returning@example.com', name: null });
    const second = await resolveGitHubSignIn(handle.db, { providerAccountId: '3003', email: 'returning@example.com', name: null });
    expect(second.user!.id).toBe(first.user!.id);
    expect(await usersWithEmail('returning@example.com')).toHaveLength(1);
    expect(await links('3003')).toHaveLength(1);
  });

  it('keeps mapping a GitHub account to its user after its e-mail changes at GitHub (even to none)', async () => {
    const first = await resolveGitHubSignIn(handle.db, { providerAccountId: '4004', email: 'old@example.com', name: 'Olga' });
    const changed = await resolveGitHubSignIn(handle.db, { providerAccountId: '4004', email: 'new-address@example.com', name: 'Olga' });
    expect(changed.user).toEqual({ id: first.user!.id, email: 'old@example.com', name: 'Olga' });
    // Even an address that belongs to another user here: the link decides, not the address.
    const other = await createUserWithPassword(handle.db, { email: 'someone-else@example.com', password: 'another password' });
    const claimed = await resolveGitHubSignIn(handle.db, { providerAccountId: '4004', email: 'someone-else@example.com', name: 'Olga' });
    expect(claimed.user!.id).toBe(first.user!.id);
    expect(claimed.user!.id).not.toBe(other.id);
    const hidden = await resolveGitHubSignIn(handle.db, { providerAccountId: '4004', email: null, name: 'Olga' });
    expect(hidden.user!.id).toBe(first.user!.id);
    expect(await usersWithEmail('new-address@example.com')).toEqual([]);
  });

  it('refuses a first sign-in without an e-mail address', async () => {
    expect(await resolveGitHubSignIn(handle.db, { providerAccountId: '5005', email: null, name: 'Nobody' })).toEqual({ refused: 'OAuthNoEmail' });
    expect(await resolveGitHubSignIn(handle.db, { providerAccountId: '5005', email: '   ', name: 'Nobody' })).toEqual({ refused: 'OAuthNoEmail' });
    expect(await links('5005')).toEqual([]);
  });

  it('keeps only the first 120 characters of a long GitHub name (the column size)', async () => {
    const result = await resolveGitHubSignIn(handle.db, { providerAccountId: '6006', email: 'long-name@example.com', name: 'n'.repeat(300) });
    expect(result.user!.name).toBe('n'.repeat(120));
  });

  it('two concurrent first sign-ins with the same GitHub account end as one user and one link', async () => {
    const profile = { providerAccountId: '7007', email: 'two-tabs@example.com', name: 'Tabs' };
    const results = await Promise.all(Array.from({ length: 4 }, () => resolveGitHubSignIn(handle.db, profile)));
    const ids = new Set(results.map((r) => r.user?.id));
    expect(results.every((r) => r.user)).toBe(true);
    expect(ids.size).toBe(1);
    expect(await usersWithEmail('two-tabs@example.com')).toHaveLength(1);
    expect(await links('7007')).toEqual([{ user_id: [...ids][0] }]);
  });

  it('concurrent first sign-ins of one GitHub account reporting two addresses: one user, and no orphan left by the loser', async () => {
    // On Postgres the loser's link insert meets the winner's link (unique violation) and
    // its transaction, user included, is rolled back; it then reads the winner's link.
    const results = await Promise.all(
      ['a', 'b', 'c'].map((tag) => resolveGitHubSignIn(handle.db, { providerAccountId: '7100', email: `moving-${tag}@example.com`, name: null })),
    );
    const [link] = await links('7100');
    expect(results.map((r) => r.user?.id)).toEqual([link!.user_id, link!.user_id, link!.user_id]);
    const created = await handle.query<{ n: number }>(`SELECT count(*)::int AS n FROM users WHERE email LIKE 'moving-%@example.com'`);
    expect(created[0]!.n).toBe(1);
  });

  it('two concurrent first sign-ins of different GitHub accounts with one address: one user, the other refused', async () => {
    const results = await Promise.all(
      ['8008', '8009'].map((id) => resolveGitHubSignIn(handle.db, { providerAccountId: id, email: 'contested@example.com', name: null })),
    );
    expect(results.filter((r) => r.user)).toHaveLength(1);
    expect(results.filter((r) => r.refused === 'OAuthAccountNotLinked')).toHaveLength(1);
    const [owner] = await usersWithEmail('contested@example.com');
    expect([...(await links('8008')), ...(await links('8009'))]).toEqual([{ user_id: owner!.id }]);
  });
});

describe('the sign-in page message for ?error=', () => {
  it('explains the known refusals and never echoes an unknown value', () => {
    expect(signInErrorMessage('OAuthNoEmail')).toMatch(/no verified e-mail address/);
    expect(signInErrorMessage('<script>alert(1)</script>')).toBe('Sign-in did not complete. Please try again.');
    expect(signInErrorMessage('toString')).toBe('Sign-in did not complete. Please try again.');
    expect(signInErrorMessage(undefined)).toBeUndefined();
    expect(signInErrorMessage(['OAuthNoEmail', 'x'])).toBeUndefined();
  });
});
