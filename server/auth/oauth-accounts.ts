import type { Database } from '@/db/client';
import { insertUserWithOAuthAccount, selectUserByOAuthAccount } from '@/db/queries/oauth-accounts';
import { recordOwnAccountEvent } from '@/server/security-log/record';
import { errorCodeOf } from '@/server/errors';
import { normalizeEmail } from './users';

/**
 * Which user a GitHub sign-in is. The GitHub account is identified by its numeric id,
 * never by its e-mail address: GitHub lets anyone put any address on an account, so
 * "same address" would hand an existing account here to whoever claims its address
 * there. A first sign-in creates a user of its own, unless the address already belongs
 * to a user here: that sign-in is refused (its owner signs in with their password).
 *
 * Kept free of next-auth, so that it runs (and is tested) on its own.
 */

export const GITHUB = 'github';

/** What GitHub says about the account signing in. */
export interface OAuthProfile {
  /** GitHub's numeric user id, as a string (next-auth's account.providerAccountId). */
  providerAccountId: string;
  email: string | null | undefined;
  name: string | null | undefined;
}

export interface OAuthUser {
  id: string;
  email: string;
  name: string | null;
}

/**
 * Why a sign-in is refused. The values are the `error` query parameter of /sign-in:
 * `OAuthAccountNotLinked` is next-auth's own name for this case.
 */
export type OAuthRefusal = 'OAuthAccountNotLinked' | 'OAuthNoEmail';

export type OAuthSignIn = { user: OAuthUser; refused?: undefined } | { user?: undefined; refused: OAuthRefusal };

const EMAIL_MAX = 320;
const NAME_MAX = 120;

export async function resolveGitHubSignIn(db: Database, profile: OAuthProfile): Promise<OAuthSignIn> {
  const linked = await selectUserByOAuthAccount(db, GITHUB, profile.providerAccountId);
  if (linked) return { user: linked };

  const email = profile.email ? normalizeEmail(profile.email) : '';
  // A user needs an address (it is the password sign-in's name too); GitHub may give none.
  if (!email || email.length > EMAIL_MAX) return { refused: 'OAuthNoEmail' };
  const name = profile.name?.trim().slice(0, NAME_MAX) || null;

  let created: OAuthUser | undefined;
  try {
    created = await insertUserWithOAuthAccount(db, { provider: GITHUB, providerAccountId: profile.providerAccountId, email, name }, (tx, user) =>
      // The new person signed up, from the address of the sign-in request (its scope).
      recordOwnAccountEvent(tx, 'sign_up', user, { method: GITHUB }),
    );
  } catch (error) {
    if (!isUniqueViolation(error)) throw error;
  }
  if (created) return { user: created };
  // Either the address belongs to someone else, or a concurrent first sign-in with this
  // same GitHub account (two tabs) created the user a moment ago: only the link tells.
  const winner = await selectUserByOAuthAccount(db, GITHUB, profile.providerAccountId);
  return winner ? { user: winner } : { refused: 'OAuthAccountNotLinked' };
}

/** SQLSTATE 23505, from postgres.js or PGlite, possibly wrapped by Drizzle. */
const isUniqueViolation = (error: unknown) => errorCodeOf(error, (code) => code === '23505') !== undefined;
