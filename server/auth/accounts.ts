import type { Database } from '@/db/client';
import { insertPasswordAccount, markEmailVerified, selectAccountByEmail, selectAccountById } from '@/db/queries/accounts';
import { checkLinkToken, issueLinkToken, redeemLink } from '@/server/access/link-tokens';
import { afterResponse } from '@/server/after-response';
import { queueMail } from '@/server/mail/outbox';
import { passwordResetMail, signUpAttemptMail, verificationMail } from '@/server/mail/templates';
import { consumeRateLimit, peekRateLimit } from '@/server/rate-limit';
import { recordOwnAccountEvent } from '@/server/security-log/record';
import { accountMailAllowed, passwordResetAllowed } from './account-limits';
import { applyNewPassword } from './password-change';
import { signUpLimited, type LimitRefusal } from './sign-in-limit';
import { hashPassword } from './passwords';
import { normalizeEmail } from './users';

/**
 * The account flows that go through e-mail: sign-up with verification, "Forgot password?",
 * the links' pages. docs/accounts.md.
 *
 * Whether an address has an account must not show, in the words or in the time: sign-up
 * and "Forgot password?" answer the same words whatever the address, and the work that
 * differs (creating the account or not, issuing a link or not, which message to queue)
 * runs after the response (`afterResponse`), so that the answer's time is the same too.
 * The request itself only validates and passes the limits.
 */

export const SIGN_UP_DONE = 'Check your e-mail to finish: we sent a message to the address you entered.';
export const RESET_REQUESTED = 'Check your e-mail: if an account has this address, we sent it a link to set a new password. The link works for 30 minutes.';
export const BAD_LINK = 'This link does not work: it may have expired, been used already, been replaced by a newer one, or belong to another account. Ask for a new one.';

export type LinkOutcome = { ok: true; email: string } | { ok: false; reason: 'bad_link' } | { ok: false; reason: 'rate_limited'; retryAfterSeconds: number };

// Sign-up ----------------------------------------------------------------------------------

/**
 * A sign-up request: counted against the client address's sign-in limit (refused before
 * any hash), then finished after the response. Whatever the address, the request does the
 * same work and the caller answers SIGN_UP_DONE.
 */
export function startSignUp(db: Database, input: { email: string; password: string; name?: string }, address: string): Promise<{ ok: true; value: void } | LimitRefusal> {
  return signUpLimited(address, async () => completeSignUpLater(db, input));
}

/** Finishes a sign-up after the response (the caller has applied the sign-up limit). */
export function completeSignUpLater(db: Database, input: { email: string; password: string; name?: string }): void {
  afterResponse(() => completeSignUp(db, input), { msg: 'a sign-up could not be completed' });
}

/**
 * A new address becomes an unverified account with a verification link; an address that
 * has an account gets "someone tried to sign up with your address" and nothing changes.
 * The password is hashed either way (the same work).
 */
export async function completeSignUp(db: Database, input: { email: string; password: string; name?: string }, now = new Date()): Promise<'created' | 'existing'> {
  const email = normalizeEmail(input.email);
  const passwordHash = await hashPassword(input.password);
  const mayMail = await accountMailAllowed(email);
  return db.transaction(async (tx) => {
    const t = tx as unknown as Database;
    const created = await insertPasswordAccount(t, { email, name: input.name?.trim() || null, passwordHash });
    if (created) {
      // The security log's sign_up event, with the account: the new person is the actor,
      // from the address of the sign-up (the action's scope, carried into this after-response work).
      await recordOwnAccountEvent(t, 'sign_up', created);
      const token = await issueLinkToken(t, 'email_verification', created.id, now);
      // Over the mail limit the account still exists: "Send the link again" after signing in.
      if (mayMail) await queueMail(t, verificationMail(created.email, token));
      return 'created';
    }
    if (mayMail) await queueMail(t, signUpAttemptMail(email));
    return 'existing';
  });
}

// Verification -----------------------------------------------------------------------------

/**
 * Uses a verification link. Signed in, only the signed-in account's own link works (another
 * account's link is refused and stays unused). A bad link counts against the client
 * address's sign-in limit, checked first.
 */
export async function verifyEmailWithLink(db: Database, attempt: { token: unknown; address: string; sessionUserId?: string }, now = new Date()): Promise<LinkOutcome> {
  const gate = await linkGate(attempt.address);
  if (gate) return gate;
  const verified = await db.transaction(async (tx) => {
    const t = tx as unknown as Database;
    const used = await redeemLink(t, 'email_verification', attempt.token, now, attempt.sessionUserId);
    if (!used) return undefined;
    await markEmailVerified(t, used.userId, now);
    return selectAccountById(t, used.userId);
  });
  if (!verified) return badLink(attempt.address);
  return { ok: true, email: verified.email };
}

/** "Send the link again" for the signed-in user: sent, already verified, or held back by the account's mail limit. */
export async function resendVerification(db: Database, userId: string, now = new Date()): Promise<'sent' | 'verified' | 'held'> {
  const account = await selectAccountById(db, userId);
  if (!account || account.emailVerifiedAt) return 'verified';
  if (!(await accountMailAllowed(account.email))) return 'held';
  await db.transaction(async (tx) => {
    const t = tx as unknown as Database;
    await queueMail(t, verificationMail(account.email, await issueLinkToken(t, 'email_verification', account.id, now)));
  });
  return 'sent';
}

// Forgot password --------------------------------------------------------------------------

/**
 * "Forgot password?": within the limits (per client address and per account, before any
 * lookup), a link goes to the address if it has an account, after the response. The
 * caller answers RESET_REQUESTED whatever happened.
 */
export async function requestPasswordReset(db: Database, request: { email: string; address: string }): Promise<void> {
  const email = normalizeEmail(request.email);
  if (!(await passwordResetAllowed(request.address, email))) return;
  afterResponse(() => sendPasswordReset(db, email), { msg: 'a password reset link could not be queued' });
}

/** Issues a reset link (revoking older ones) and queues its e-mail, if the address has an account. */
export async function sendPasswordReset(db: Database, email: string, now = new Date()): Promise<boolean> {
  return db.transaction(async (tx) => {
    const t = tx as unknown as Database;
    const account = await selectAccountByEmail(t, normalizeEmail(email));
    if (!account) return false;
    await queueMail(t, passwordResetMail(account.email, await issueLinkToken(t, 'password_reset', account.id, now)));
    return true;
  });
}

/**
 * Sets a new password through a reset link (the password already meets the sign-up
 * rules). The link is checked before the password is hashed, and used in the transaction
 * that changes the password: every session ends, every other reset link is revoked, the
 * "password changed" e-mail is queued, and the address counts as verified (the link
 * reached it). Signed in, only the signed-in account's own link works.
 */
export async function resetPasswordWithLink(
  db: Database,
  attempt: { token: unknown; password: string; address: string; sessionUserId?: string },
  now = new Date(),
): Promise<LinkOutcome> {
  const gate = await linkGate(attempt.address);
  if (gate) return gate;
  const valid = await checkLinkToken(db, 'password_reset', attempt.token, now);
  if (!valid || (attempt.sessionUserId && valid.userId !== attempt.sessionUserId)) return badLink(attempt.address);
  const passwordHash = await hashPassword(attempt.password);
  const changed = await db.transaction(async (tx) => {
    const t = tx as unknown as Database;
    const used = await redeemLink(t, 'password_reset', attempt.token, now, valid.userId);
    const account = used && (await selectAccountById(t, used.userId));
    if (!account) return undefined;
    await applyNewPassword(t, account, passwordHash, { now, clientAddress: attempt.address });
    await markEmailVerified(t, account.id, now);
    return account;
  });
  if (!changed) return badLink(attempt.address);
  return { ok: true, email: changed.email };
}

// Bad links --------------------------------------------------------------------------------

/** A client address out of failed attempts is refused before any lookup. */
async function linkGate(address: string): Promise<LinkOutcome | undefined> {
  const state = await peekRateLimit('sign_in_address', address);
  if (state.allowed) return undefined;
  return { ok: false, reason: 'rate_limited', retryAfterSeconds: Math.max(1, Math.ceil((state.resetMs - Date.now()) / 1000)) };
}

async function badLink(address: string): Promise<LinkOutcome> {
  await consumeRateLimit('sign_in_address', address);
  return { ok: false, reason: 'bad_link' };
}
