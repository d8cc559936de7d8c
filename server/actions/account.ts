'use server';

import { headers } from 'next/headers';
import { redirect } from 'next/navigation';
import { AuthError } from 'next-auth';
import { getDb } from '@/server/database';
import { changePassword } from '@/server/accounts/change-password';
import { deleteAccount } from '@/server/accounts/delete-account';
import { signIn, signOut } from '@/server/auth/next-auth';
import { currentUser } from '@/server/auth/session';
import { describeWait, SignInRateLimited, tooManySignInAttempts } from '@/server/auth/sign-in-refusal';
import { clientAddressOf } from '@/server/http/client-address';

/**
 * Settings → Account: change the password, delete the account (server/accounts/). Server
 * actions, so Next.js refuses a cross-site post (its Origin must match the host) and the
 * session cookie is SameSite=Lax besides.
 */

export interface AccountFormState {
  error?: string;
  fieldErrors?: Record<string, string>;
  done?: string;
  retryAfterSeconds?: number;
  /** Organisations that stop a deletion, named on the page. */
  blockedBy?: { name: string; reason: 'sole_owner' | 'last_member' }[];
}

const SIGNED_OUT: AccountFormState = { error: 'Your session has ended. Sign in again.' };
const field = (form: FormData, name: string) => {
  const value = form.get(name);
  return typeof value === 'string' ? value : '';
};

export async function changePasswordAction(_prev: AccountFormState, form: FormData): Promise<AccountFormState> {
  const user = await currentUser();
  if (!user) return SIGNED_OUT;
  const newPassword = field(form, 'newPassword');
  const outcome = await changePassword(await getDb(), {
    userId: user.id,
    address: clientAddressOf(await headers()),
    currentPassword: field(form, 'currentPassword'),
    newPassword,
  });
  if (!outcome.ok) {
    switch (outcome.reason) {
      case 'invalid':
        return { fieldErrors: outcome.fieldErrors };
      case 'wrong_password':
        return { fieldErrors: { currentPassword: 'That is not your current password.' } };
      case 'rate_limited':
        return { error: tooManySignInAttempts(outcome.retryAfterSeconds), retryAfterSeconds: outcome.retryAfterSeconds };
      case 'no_password':
        return { error: 'This account signs in with GitHub and has no password to change.' };
      case 'changed_meanwhile':
        return { error: 'Your password was changed meanwhile. Sign in again with the new one.' };
      case 'gone':
        return SIGNED_OUT;
    }
  }
  // Every session ended with the change, this one too: sign this browser in again with
  // the new password, so that the person who changed it stays signed in.
  try {
    await signIn('credentials', { email: outcome.email, password: newPassword, redirect: false });
  } catch (error) {
    if (error instanceof AuthError) {
      const wait = error instanceof SignInRateLimited ? error.retryAfterSeconds : undefined;
      return { error: `Your password was changed. Sign in again${wait ? ` in ${describeWait(wait)}` : ''}.` };
    }
    throw error;
  }
  return { done: 'Your password was changed. Every other session has been signed out.' };
}

export async function deleteAccountAction(_prev: AccountFormState, form: FormData): Promise<AccountFormState> {
  const user = await currentUser();
  if (!user) return SIGNED_OUT;
  const outcome = await deleteAccount(await getDb(), {
    userId: user.id,
    address: clientAddressOf(await headers()),
    confirmEmail: field(form, 'confirmEmail'),
    password: field(form, 'password'),
    session: user.signIn ?? {},
  });
  if (!outcome.ok) {
    switch (outcome.reason) {
      case 'email_mismatch':
        return { fieldErrors: { confirmEmail: 'Type the e-mail address of this account exactly.' } };
      case 'wrong_password':
        return { fieldErrors: { password: 'That is not your password.' } };
      case 'rate_limited':
        return { error: tooManySignInAttempts(outcome.retryAfterSeconds), retryAfterSeconds: outcome.retryAfterSeconds };
      case 'needs_fresh_sign_in':
        return { error: 'Sign in with GitHub again (within the last 10 minutes) to confirm that it is you.' };
      case 'blocked':
        return {
          error: 'You cannot delete your account while an organisation would be left without an owner. Make another member an owner first.',
          blockedBy: outcome.organizations.map(({ name, reason }) => ({ name, reason })),
        };
      case 'gone':
        break;
    }
  }
  // The session cookie names a user who no longer exists: clear it.
  await signOut({ redirect: false });
  redirect('/account-deleted');
}

/** "Sign in with GitHub again" before a deletion: comes back to the account page. */
export async function confirmWithGitHubAction(): Promise<void> {
  await signIn('github', { redirectTo: '/settings/account#delete' });
}
