'use client';

import Link from 'next/link';
import { useActionState } from 'react';
import { verifyEmailAction } from '@/server/actions/accounts';
import type { FormState } from '@/server/actions/auth';
import { useRetryAfter } from '@/components/auth-form';
import { currentLinkToken, useLinkToken } from './link-token';

/**
 * The verification link's page: a button, rather than verifying on opening, so that a mail
 * scanner that fetches every link in a message does not use it up.
 */
export function VerifyEmailForm() {
  const { token, read } = useLinkToken();
  // The token joins the form data at submission (React empties a form after each answer).
  const [state, formAction, pending] = useActionState<FormState, FormData>((previous, form) => {
    form.set('token', currentLinkToken());
    return verifyEmailAction(previous, form);
  }, {});
  const secondsLeft = useRetryAfter(state.retryAfterSeconds, state);
  if (state.done) {
    return (
      <div role="status">
        <div className="alert alert-info">{state.done}</div>
        <p className="muted small" style={{ textAlign: 'center' }}>
          <Link href="/settings/api-keys">Go to Settings</Link>
        </p>
      </div>
    );
  }
  return (
    <form action={formAction}>
      {state.error || (read && !token) ? (
        <div className="alert alert-error" role="alert">
          {state.error ?? 'This page opens from the link in the e-mail.'} Signed in, use “Send the link again” in{' '}
          <Link href="/settings/api-keys">Settings</Link>.
        </div>
      ) : null}
      <button type="submit" className="btn btn-primary" style={{ width: '100%' }} disabled={!read || !token || pending || secondsLeft > 0}>
        {pending ? 'Please wait…' : 'Verify my e-mail address'}
      </button>
    </form>
  );
}
