import 'server-only';
import type { OAuthRefusal } from './oauth-accounts';

/**
 * The message the sign-in page shows for the `error` query parameter that a refused
 * sign-in comes back with. The parameter is never shown itself: anyone can write a link
 * with any text in it.
 */
const MESSAGES: Record<OAuthRefusal, string> = {
  OAuthAccountNotLinked: 'An account with this e-mail already exists. Sign in with your password.',
  OAuthNoEmail: 'Your GitHub account has no verified e-mail address. Verify one at GitHub, or create an account with a password.',
};

const OTHER = 'Sign-in did not complete. Please try again.';

export function signInErrorMessage(code: unknown): string | undefined {
  if (typeof code !== 'string' || code === '') return undefined;
  return Object.hasOwn(MESSAGES, code) ? MESSAGES[code as OAuthRefusal] : OTHER;
}
