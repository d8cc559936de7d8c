'use server';

import { headers } from 'next/headers';
import { redirect } from 'next/navigation';
import { z } from 'zod';
import { getDb } from '@/server/database';
import { BAD_LINK, requestPasswordReset, resendVerification, RESET_REQUESTED, resetPasswordWithLink, verifyEmailWithLink, type LinkOutcome } from '@/server/auth/accounts';
import { emailField, newPasswordField } from '@/server/auth/password-rules';
import { currentUser } from '@/server/auth/session';
import { tooManySignInAttempts } from '@/server/auth/sign-in-refusal';
import { clientAddressOf } from '@/server/http/client-address';
import type { FormState } from './auth';

/** The account pages' forms (app/forgot-password, app/reset-password, app/verify-email, Settings' notice). */

/** "Forgot password?": the same words whatever the address, limited or not. */
export async function requestPasswordResetAction(_prev: FormState, form: FormData): Promise<FormState> {
  const parsed = emailField.safeParse(form.get('email') ?? '');
  if (!parsed.success) return { fieldErrors: { email: 'Enter a valid email address.' }, email: String(form.get('email') ?? '') };
  await requestPasswordReset(await getDb(), { email: parsed.data, address: clientAddressOf(await headers()) });
  return { done: RESET_REQUESTED, email: parsed.data };
}

const tokenField = z.string().max(100);

function refusal(outcome: Exclude<LinkOutcome, { ok: true }>): FormState {
  if (outcome.reason === 'rate_limited') return { error: tooManySignInAttempts(outcome.retryAfterSeconds), retryAfterSeconds: outcome.retryAfterSeconds };
  return { error: BAD_LINK };
}

/** The reset page: a new password through the link; then every session has ended: sign in again. */
export async function resetPasswordAction(_prev: FormState, form: FormData): Promise<FormState> {
  const token = tokenField.safeParse(form.get('token') ?? '');
  const password = newPasswordField.safeParse(form.get('password') ?? '');
  if (!password.success) return { fieldErrors: { password: password.error.issues[0]!.message } };
  if (!token.success) return { error: BAD_LINK };
  const user = await currentUser();
  const outcome = await resetPasswordWithLink(await getDb(), { token: token.data, password: password.data, address: clientAddressOf(await headers()), sessionUserId: user?.id });
  if (!outcome.ok) return refusal(outcome);
  redirect('/sign-in?notice=password-changed');
}

/** The verification page's button. */
export async function verifyEmailAction(_prev: FormState, form: FormData): Promise<FormState> {
  const token = tokenField.safeParse(form.get('token') ?? '');
  if (!token.success) return { error: BAD_LINK };
  const user = await currentUser();
  const outcome = await verifyEmailWithLink(await getDb(), { token: token.data, address: clientAddressOf(await headers()), sessionUserId: user?.id });
  if (!outcome.ok) return refusal(outcome);
  return { done: `Your e-mail address ${outcome.email} is verified. You can now create API keys, calendar feeds and webhook endpoints.` };
}

/** Settings' "Send the link again". */
export async function resendVerificationAction(_prev: FormState): Promise<FormState> {
  const user = await currentUser();
  if (!user) return { error: 'Sign in first.' };
  switch (await resendVerification(await getDb(), user.id)) {
    case 'sent':
      return { done: `We sent a new link to ${user.email}. It works for 24 hours.` };
    case 'verified':
      return { done: 'Your e-mail address is verified.' };
    case 'held':
      return { error: 'We already sent several e-mails to this address in the last hour. Wait a little, and look in your spam folder.' };
  }
}
