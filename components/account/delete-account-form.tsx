'use client';

import { useActionState } from 'react';
import { confirmWithGitHubAction, deleteAccountAction, type AccountFormState } from '@/server/actions/account';
import { Field } from '@/components/form-field';

/**
 * The deletion asks for the typed e-mail address and the password (or, for an account
 * without one, a GitHub sign-in within the last 10 minutes).
 */
export function DeleteAccountForm({ hasPassword, freshGitHubSignIn, githubEnabled }: { hasPassword: boolean; freshGitHubSignIn: boolean; githubEnabled: boolean }) {
  const [state, formAction, pending] = useActionState<AccountFormState, FormData>(deleteAccountAction, {});
  if (!hasPassword && !freshGitHubSignIn) {
    return (
      <form action={confirmWithGitHubAction}>
        <p className="muted">To delete an account that signs in with GitHub, sign in with GitHub again first (it counts for 10 minutes).</p>
        <button type="submit" className="btn" disabled={!githubEnabled}>
          Sign in with GitHub again
        </button>
      </form>
    );
  }
  return (
    <form action={formAction} noValidate key={JSON.stringify(state)} aria-labelledby="delete-account-title">
      {state.error ? (
        <div className="alert alert-error" role="alert">
          {state.error}
          {state.blockedBy?.length ? (
            <ul>
              {state.blockedBy.map((org) => (
                <li key={org.name}>
                  {org.name}: {org.reason === 'sole_owner' ? 'you are its only owner' : 'you are its last member'}
                </li>
              ))}
            </ul>
          ) : null}
        </div>
      ) : null}
      <Field required name="confirmEmail" label="Your e-mail address" type="email" autoComplete="off" error={state.fieldErrors?.confirmEmail} />
      {hasPassword ? <Field required name="password" label="Password" type="password" autoComplete="current-password" error={state.fieldErrors?.password} /> : null}
      <button type="submit" className="btn btn-danger" disabled={pending}>
        {pending ? 'Please wait…' : 'Delete my account'}
      </button>
    </form>
  );
}
