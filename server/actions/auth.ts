'use server';

import { headers } from 'next/headers';
import { AuthError } from 'next-auth';
import { redirect } from 'next/navigation';
import { z } from 'zod';
import { getDb } from '@/server/database';
import { signIn, signOut } from '@/server/auth/next-auth';
import { SIGN_UP_DONE, startSignUp } from '@/server/auth/accounts';
import { emailField, newPasswordField } from '@/server/auth/password-rules';
import { redirectPathOf, safeCallbackUrl } from '@/server/auth/callback-url';
import { currentUser } from '@/server/auth/session';
import { endAllSessions } from '@/server/auth/session-version';
import { SignInRateLimited, tooManySignInAttempts } from '@/server/auth/sign-in-refusal';
import { clientAddressOf, SHARED_CLIENT_BUCKET } from '@/server/http/client-address';
import { SYSTEM_ACTOR, userAgentOf, withActor, type SecurityActor } from '@/server/security-log/actor';

export interface FormState {
  error?: string;
  fieldErrors?: Record<string, string>;
  email?: string;
  /** Set when the limit refused the attempt: the form waits this long before it submits again. */
  retryAfterSeconds?: number;
  /** The request was taken: the form gives way to this message. */
  done?: string;
}

function refused(retryAfterSeconds: number, email: string): FormState {
  return { error: tooManySignInAttempts(retryAfterSeconds), retryAfterSeconds, email };
}

const GENERIC_SIGN_IN_ERROR = 'Wrong email or password.';

export async function signInWithPassword(_prev: FormState, form: FormData): Promise<FormState> {
  const email = String(form.get('email') ?? '');
  const password = String(form.get('password') ?? '');
  const redirectTo = safeCallbackUrl(form.get('callbackUrl'));
  let target: string;
  try {
    target = await signIn('credentials', { email, password, redirectTo, redirect: false });
  } catch (error) {
    if (error instanceof SignInRateLimited) return refused(error.retryAfterSeconds, email);
    if (error instanceof AuthError) return { error: GENERIC_SIGN_IN_ERROR, email };
    throw error;
  }
  // A path, never an absolute URL built from the request's host headers (callback-url.ts).
  redirect(redirectPathOf(target));
}

const signUpSchema = z.object({
  name: z.string().trim().max(120, 'At most 120 characters.'),
  email: emailField,
  password: newPasswordField,
});

export async function signUpWithPassword(_prev: FormState, form: FormData): Promise<FormState> {
  const parsed = signUpSchema.safeParse({
    name: form.get('name') ?? '',
    email: form.get('email') ?? '',
    password: form.get('password') ?? '',
  });
  const email = String(form.get('email') ?? '');
  if (!parsed.success) {
    const fieldErrors: Record<string, string> = {};
    for (const issue of parsed.error.issues) fieldErrors[String(issue.path[0])] ??= issue.message;
    return { fieldErrors, email };
  }
  // Sign-ups count against the sign-in limit of the client address (sign-in-limit.ts).
  // The rest (hash, account or not, which e-mail) runs after the response: the answer and
  // its time are the same whether or not the address has an account (server/auth/accounts.ts).
  const db = await getDb();
  const requestHeaders = await headers();
  const address = clientAddressOf(requestHeaders);
  // The security log's sign-up event (written with the account, after the response) names
  // the address and user agent the sign-up came from.
  const from = { clientAddress: address === SHARED_CLIENT_BUCKET ? null : address, userAgent: userAgentOf(requestHeaders) };
  const taken = await withActor({ ...SYSTEM_ACTOR, ...from }, () => startSignUp(db, parsed.data, address));
  if (!taken.ok) return refused(taken.retryAfterSeconds, email);
  return { done: SIGN_UP_DONE, email: parsed.data.email };
}

/** Sign-out ends every session of the user (next-auth's signOut event raises the session version). */
export async function signOutAction(): Promise<void> {
  await withActor(await requestActor(), () => signOut({ redirectTo: '/', redirect: false }));
  redirect('/');
}

/**
 * Settings' "Sign out everywhere": every session of the user, in every browser, stops
 * working on its next request; this browser goes to sign-in.
 */
export async function signOutEverywhereAction(): Promise<void> {
  const user = await currentUser();
  // One scope for both: next-auth's signOut event ends the sessions again, and the
  // security log gets one event (endAllSessions remembers it in the scope).
  await withActor(await requestActor(), async () => {
    if (user) await endAllSessions(await getDb(), user.id);
    await signOut({ redirectTo: '/sign-in', redirect: false });
  });
  redirect('/sign-in');
}

export async function signInWithGitHub(form: FormData): Promise<void> {
  await signIn('github', { redirectTo: safeCallbackUrl(form.get('callbackUrl')) });
}

/** The request's address and user agent, for the security log's events of this action. */
async function requestActor(): Promise<SecurityActor> {
  const requestHeaders = await headers();
  const address = clientAddressOf(requestHeaders);
  return { ...SYSTEM_ACTOR, clientAddress: address === SHARED_CLIENT_BUCKET ? null : address, userAgent: userAgentOf(requestHeaders) };
}
