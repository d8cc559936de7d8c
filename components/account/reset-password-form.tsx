'use client';

import Link from 'next/link';
import { useActionState } from 'react';
import { resetPasswordAction } from '@/server/actions/accounts';
import type { FormState } from '@/server/actions/auth';
import { useRetryAfter } from '@/components/auth-form';
import { Field } from '@/components/form-field';
import { currentLinkToken, useLinkToken } from './link-token';

/** A new password through a reset link; success goes to sign-in (every session has ended). */
export function ResetPasswordForm() {
  const { token, read } = useLinkToken();
  // The token joins the form data at submission, not as a field: React empties a form after
  // each answer, and a hidden field would lose the token with it (a second try would fail).
  const [state, formAction, pending] = useActionState<FormState, FormData>((previous, form) => {
    form.set('token', currentLinkToken());
    return resetPasswordAction(previous, form);
  }, {});
  const secondsLeft = useRetryAfter(state.retryAfterSeconds, state);
  if (read && !token) return <BadLink />;
  return (
    <form action={formAction} noValidate>
      {state.error ? (
        <div className="alert alert-error" role="alert">
          {state.error} {state.retryAfterSeconds ? null : <Link href="/forgot-password">Ask for a new link</Link>}
        </div>
      ) : null}
      <Field name="password" label="New password" type="password" autoComplete="new-password" required hint="At least 10 characters." error={state.fieldErrors?.password} />
      <button type="submit" className="btn btn-primary" style={{ width: '100%' }} disabled={!read || pending || secondsLeft > 0}>
        {pending ? 'Please wait…' : secondsLeft > 0 ? `Try again in ${secondsLeft} s` : 'Set the new password'}
      </button>
    </form>
  );
}

function BadLink() {
  return (
    <div className="alert alert-error" role="alert">
      This page opens from the link in the e-mail. <Link href="/forgot-password">Ask for a new link</Link>
    </div>
  );
}
