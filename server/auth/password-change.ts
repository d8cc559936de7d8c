import type { Database } from '@/db/client';
import { updatePasswordHash } from '@/db/queries/accounts';
import { bumpSessionVersion } from '@/db/queries/sessions';
import { queueMail } from '@/server/mail/outbox';
import { passwordChangedMail } from '@/server/mail/templates';

/**
 * What every change of a password does, in the caller's transaction: the new hash (which
 * revokes the user's reset links: migration 0011's trigger), every session ended (the
 * session version: server/auth/session-version.ts), and the "password changed" e-mail
 * with the time and the client address. A caller that keeps its own session signed in
 * (Settings' change of password) issues that session again afterwards.
 */
export async function applyNewPassword(
  tx: Database,
  account: { id: string; email: string },
  passwordHash: string,
  change: { now: Date; clientAddress?: string },
): Promise<void> {
  await updatePasswordHash(tx, account.id, passwordHash);
  await bumpSessionVersion(tx, account.id);
  await queueMail(tx, passwordChangedMail(account.email, { at: change.now, clientAddress: change.clientAddress }));
}
