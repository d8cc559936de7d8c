import { countSignInRefusal } from '@/server/observability/metrics';
import { consumeRateLimit, peekRateLimit } from '@/server/rate-limit';
import { accountIdentifier } from './sign-in-limit';

/**
 * The limits of the account flows that send e-mail, in the sign-in limiter's store (Redis,
 * Upstash or memory) and with its account identifier (a hash of the normalised address:
 * no address reaches the store):
 *
 * - `password_reset_address`: "Forgot password?" requests per client address and hour;
 * - `account_mail`: e-mails about one account (reset links, verification links, "someone
 *   tried to sign up with your address") per hour, so that nobody can fill an inbox.
 *
 * Both are checked before any lookup, hash or message. A refused request answers what an
 * allowed one does ("Check your e-mail"): the limit says nothing about the address either.
 */

/** Whether a "Forgot password?" request may go on; counts it against the address and the account. */
export async function passwordResetAllowed(address: string, email: string): Promise<boolean> {
  const account = accountIdentifier(email);
  const [byAddress, byAccount] = await Promise.all([peekRateLimit('password_reset_address', address), peekRateLimit('account_mail', account)]);
  if (!byAddress.allowed) return refused('password_reset_address');
  if (!byAccount.allowed) return refused('account_mail');
  await Promise.all([consumeRateLimit('password_reset_address', address), consumeRateLimit('account_mail', account)]);
  return true;
}

/** Whether one more e-mail about the account of `email` may be sent this hour; counts it. */
export async function accountMailAllowed(email: string): Promise<boolean> {
  const counted = await consumeRateLimit('account_mail', accountIdentifier(email));
  return counted.allowed || refused('account_mail');
}

function refused(bucket: 'password_reset_address' | 'account_mail'): false {
  countSignInRefusal(bucket);
  return false;
}
