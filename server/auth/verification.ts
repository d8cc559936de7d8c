import type { Database } from '@/db/client';
import { selectAccountById } from '@/db/queries/accounts';
import { AppError } from '@/server/errors';

/**
 * Until its address is verified an account can sign in, but cannot create what acts in its
 * name outside the app (API keys, calendar feeds, webhook endpoints): someone who typed
 * another person's address must not get credentials under it. Accounts from before
 * verification existed, and GitHub sign-ins (GitHub's verified primary address), are
 * verified. The settings pages say so with "Send the link again"; the server refuses here.
 */
export const UNVERIFIED_MESSAGE = 'Verify your e-mail address first: open the link we sent you. Until then this account cannot create API keys, calendar feeds or webhook endpoints.';

export async function isEmailVerified(db: Database, userId: string): Promise<boolean> {
  return Boolean((await selectAccountById(db, userId))?.emailVerifiedAt);
}

/** Throws 403 with UNVERIFIED_MESSAGE unless the user's address is verified. */
export async function requireVerifiedEmail(db: Database, userId: string): Promise<void> {
  if (!(await isEmailVerified(db, userId))) throw new AppError('forbidden', UNVERIFIED_MESSAGE);
}
