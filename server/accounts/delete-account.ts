import type { Database } from '@/db/client';
import { deleteAccountRows, selectAccount, selectDeletionBlocks, type OrganizationBlock } from '@/db/queries/own-account';
import { announceRevocation } from '@/server/access/revocations';
import { forgetVerifiedToken } from '@/server/access/tokens';
import { signInWithPasswordLimited } from '@/server/auth/sign-in-limit';
import { normalizeEmail } from '@/server/auth/users';
import { queueMail } from '@/server/mail/outbox';
import { accountDeletedMail } from '@/server/mail/templates';
import { logger } from '@/server/observability/logger';

/**
 * Settings → Account → Delete, for a signed-in person (docs/accounts.md).
 *
 * The person types their e-mail address and proves it is them: their password, checked as
 * a sign-in checks it (limited, and a wrong one counts as a failed sign-in), or, for an
 * account without a password (GitHub only), a session that signed in with GitHub within
 * FRESH_SIGN_IN_SECONDS. Someone who finds a browser left signed in cannot delete the
 * account with it.
 *
 * Refused while the person is the only owner of an organisation (or its last member):
 * its contracts and members would be left without anyone who can manage them.
 *
 * One transaction removes the person's personal contracts, memberships, GitHub links, API
 * keys, calendar feeds and webhook endpoints (db/queries/accounts.ts), and hands the
 * contracts they created in an organisation to another member of it. The row is gone, so
 * every session ends on its next request (server/auth/session-version.ts); the API keys
 * are then announced revoked to every instance (server/access/revocations.ts), as a
 * revocation in Settings does. An e-mail, queued in the same transaction, confirms it.
 */

/** How recent a GitHub sign-in must be to stand for a password (10 minutes). */
export const FRESH_SIGN_IN_SECONDS = 600;

export interface SessionSignIn {
  /** How the session was signed in: 'credentials' or 'github' (the session's claims). */
  method?: string;
  /** When, in seconds since the epoch. */
  at?: number;
}

export interface DeleteAccountInput {
  userId: string;
  address: string;
  /** The address the person typed to confirm. */
  confirmEmail: string;
  password?: string;
  session: SessionSignIn;
  now?: Date;
}

export type DeleteAccountOutcome =
  | { ok: true; email: string; name: string | null; deletedAt: Date }
  | { ok: false; reason: 'email_mismatch' | 'wrong_password' | 'needs_fresh_sign_in' | 'gone' }
  | { ok: false; reason: 'rate_limited'; retryAfterSeconds: number }
  | { ok: false; reason: 'blocked'; organizations: OrganizationBlock[] };

/** Whether a session signed in with GitHub recently enough to confirm a deletion. */
export function isFreshGitHubSignIn(session: SessionSignIn, now: Date): boolean {
  if (session.method !== 'github' || typeof session.at !== 'number') return false;
  const age = Math.floor(now.getTime() / 1000) - session.at;
  return age >= -60 && age <= FRESH_SIGN_IN_SECONDS;
}

export async function deleteAccount(db: Database, input: DeleteAccountInput): Promise<DeleteAccountOutcome> {
  const now = input.now ?? new Date();
  const account = await selectAccount(db, input.userId);
  if (!account) return { ok: false, reason: 'gone' };
  if (normalizeEmail(input.confirmEmail) !== normalizeEmail(account.email)) return { ok: false, reason: 'email_mismatch' };

  const blocks = await selectDeletionBlocks(db, account.id);
  if (blocks.length > 0) return { ok: false, reason: 'blocked', organizations: blocks };

  if (account.passwordHash) {
    const checked = await signInWithPasswordLimited(db, { address: input.address, email: account.email, password: input.password ?? '' });
    if (!checked.ok) return checked.reason === 'rate_limited' ? checked : { ok: false, reason: 'wrong_password' };
    if (checked.value.id !== account.id) return { ok: false, reason: 'wrong_password' };
  } else if (!isFreshGitHubSignIn(input.session, now)) {
    return { ok: false, reason: 'needs_fresh_sign_in' };
  }

  const deleted: { blocked: OrganizationBlock[] } | { tokenIds: string[] } | undefined = await db.transaction(async (t) => {
    const tx = t as unknown as Database;
    // Again inside the transaction: another owner may have left since the check above.
    const blocksNow = await selectDeletionBlocks(tx, account.id);
    if (blocksNow.length > 0) return { blocked: blocksNow };
    const rows = await deleteAccountRows(tx, account.id);
    // Queued with the deletion (the outbox row names no user): sent if and only if it committed.
    if (rows) await queueMail(tx, accountDeletedMail(account.email, { at: now, clientAddress: input.address }));
    return rows;
  });
  if (!deleted) return { ok: false, reason: 'gone' };
  if ('blocked' in deleted) return { ok: false, reason: 'blocked', organizations: deleted.blocked };

  // The rows are gone; every instance drops the keys from its cache now rather than within 30 s.
  for (const id of deleted.tokenIds) forgetVerifiedToken(id);
  await Promise.all(deleted.tokenIds.map((id) => announceRevocation(db, id)));
  logger().info({ user_id: account.id, tokens: deleted.tokenIds.length }, 'account deleted');
  return { ok: true, email: account.email, name: account.name, deletedAt: now };
}
