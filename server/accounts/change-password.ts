import type { Database } from '@/db/client';
import { lockPasswordHash, selectAccount } from '@/db/queries/own-account';
import { applyNewPassword } from '@/server/auth/password-change';
import { newPasswordField } from '@/server/auth/password-rules';
import { hashPassword, needsRehash } from '@/server/auth/passwords';
import { signInWithPasswordLimited } from '@/server/auth/sign-in-limit';

/**
 * Settings → Account → Change password, for a signed-in person (docs/accounts.md).
 *
 * The current password is checked exactly as a sign-in checks it (signInWithPasswordLimited:
 * refused before any hash when the client address or the account is out of failed
 * attempts; a wrong one counts as a failed sign-in against both), so that a stolen
 * session cannot guess the password any faster than the sign-in form can. The new one
 * follows sign-up's rules and must differ from the current one.
 *
 * On success (applyNewPassword, over the hash that was checked, the row locked) every
 * session of the person ends on its next request, every password-reset link is revoked (the trigger
 * of migration 0011), and an e-mail tells the person when and from which address. The caller signs the changing browser in again
 * with the new password (server/actions/account.ts), so that one stays signed in.
 */

export interface ChangePasswordInput {
  userId: string;
  /** The client address (clientAddressOf), for the sign-in limit. */
  address: string;
  currentPassword: string;
  newPassword: string;
  now?: Date;
}

export type ChangePasswordOutcome =
  | { ok: true; email: string; name: string | null; changedAt: Date }
  | { ok: false; reason: 'invalid'; fieldErrors: { currentPassword?: string; newPassword?: string } }
  | { ok: false; reason: 'wrong_password' | 'no_password' | 'changed_meanwhile' | 'gone' }
  | { ok: false; reason: 'rate_limited'; retryAfterSeconds: number };

export async function changePassword(db: Database, input: ChangePasswordInput): Promise<ChangePasswordOutcome> {
  const fieldErrors: { currentPassword?: string; newPassword?: string } = {};
  if (!input.currentPassword) fieldErrors.currentPassword = 'Enter your current password.';
  const rules = newPasswordField.safeParse(input.newPassword);
  if (!rules.success) fieldErrors.newPassword = rules.error.issues[0]!.message;
  else if (input.newPassword === input.currentPassword) fieldErrors.newPassword = 'Choose a password other than your current one.';
  if (fieldErrors.currentPassword || fieldErrors.newPassword) return { ok: false, reason: 'invalid', fieldErrors };

  const account = await selectAccount(db, input.userId);
  if (!account) return { ok: false, reason: 'gone' };
  if (!account.passwordHash) return { ok: false, reason: 'no_password' };

  const checked = await signInWithPasswordLimited(db, { address: input.address, email: account.email, password: input.currentPassword });
  if (!checked.ok) return checked.reason === 'rate_limited' ? checked : { ok: false, reason: 'wrong_password' };
  if (checked.value.id !== account.id) return { ok: false, reason: 'wrong_password' };

  // Only over the hash the check compared against: of two changes checked against the same
  // current password, the second finds another hash and changes nothing. A sign-in at an
  // old cost has just rehashed the same password: the hash it wrote then stands for it.
  const newHash = await hashPassword(input.newPassword);
  const changedAt = input.now ?? new Date();
  // applyNewPassword (shared with the reset link) writes the hash, ends every session and
  // queues the e-mail in this transaction; the trigger of migration 0011 revokes every
  // password-reset link.
  const replace = (expected: string) =>
    db.transaction(async (t) => {
      const tx = t as unknown as Database;
      if ((await lockPasswordHash(tx, account.id)) !== expected) return false;
      await applyNewPassword(tx, account, newHash, { now: changedAt, clientAddress: input.address });
      return true;
    });
  let applied = await replace(account.passwordHash);
  if (!applied && needsRehash(account.passwordHash)) {
    const rehashed = (await selectAccount(db, account.id))?.passwordHash;
    if (rehashed && !needsRehash(rehashed)) applied = await replace(rehashed);
  }
  if (!applied) return { ok: false, reason: 'changed_meanwhile' };
  return { ok: true, email: account.email, name: account.name, changedAt };
}
