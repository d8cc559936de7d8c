import { AsyncLocalStorage } from 'node:async_hooks';
import { CredentialsSignin } from 'next-auth';

/**
 * A password sign-in refused by the limit (sign-in-limit.ts), thrown from `authorize`.
 * next-auth passes `code` on (`?code=rate_limited` after a redirect); the server actions
 * catch the error itself and read `retryAfterSeconds`.
 */
export class SignInRateLimited extends CredentialsSignin {
  code = 'rate_limited';
  constructor(readonly retryAfterSeconds: number) {
    super();
  }
}

/**
 * The refusal of the request next-auth's route handler is serving, so that the handler
 * can answer 429 with Retry-After instead of next-auth's redirect (which carries only the
 * code). authorize() runs inside the handler's call, so AsyncLocalStorage reaches it.
 */
const refusals = new AsyncLocalStorage<{ retryAfterSeconds?: number }>();

export function noteRefusal(error: SignInRateLimited): void {
  const slot = refusals.getStore();
  if (slot) slot.retryAfterSeconds = error.retryAfterSeconds;
}

export async function withRefusalSlot(run: () => Promise<Response>): Promise<{ response: Response; retryAfterSeconds?: number }> {
  const slot: { retryAfterSeconds?: number } = {};
  const response = await refusals.run(slot, run);
  return { response, retryAfterSeconds: slot.retryAfterSeconds };
}

/** One line per failed sign-in: no stack, no e-mail address (next-auth's default logs 11 lines with a stack). */
export function describeSignInFailure(error: CredentialsSignin): string {
  return error instanceof SignInRateLimited ? 'password sign-in refused: too many failed attempts' : 'password sign-in failed: wrong e-mail or password';
}

/** The fields of the sign-in failure's log line: never the e-mail address or the password. */
export function signInFailureFields(error: CredentialsSignin): { retry_after_s?: number } {
  return error instanceof SignInRateLimited ? { retry_after_s: error.retryAfterSeconds } : {};
}

/** What the person is told, on the form and on the callback's 429 page. */
export function tooManySignInAttempts(retryAfterSeconds: number): string {
  return `Too many failed sign-in attempts. Try again in ${describeWait(retryAfterSeconds)}.`;
}

/** "42 seconds", "15 minutes". */
export function describeWait(seconds: number): string {
  return seconds < 120 ? `${seconds} seconds` : `${Math.ceil(seconds / 60)} minutes`;
}
