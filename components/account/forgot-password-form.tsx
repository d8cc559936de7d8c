'use client';

import Link from 'next/link';
import { useActionState } from 'react';
import { requestPasswordResetAction } from '@/server/actions/accounts';
import type { FormState } from '@/server/actions/auth';
import { Field } from '@/components/form-field';

/** "Forgot password?": one address in, the same words out whatever it is. */
export function ForgotPasswordForm() {
  const [state, formAction, pending] = useActionState<FormState, FormData>(requestPasswordResetAction, {});
  if (state.done) {
    return (
      <div role="status">
        <div className="alert alert-info">{state.done}</div>
        <p className="muted small" style={{ textAlign: 'center' }}>
          <Link href="/sign-in">Back to sign-in</Link>
        </p>
      </div>
    );
  }
  return (
    <form action={formAction} noValidate>
      <Field name="email" label="Email" type="email" autoComplete="email" defaultValue={state.email} required error={state.fieldErrors?.email} />
      <button type="submit" className="btn btn-primary" style={{ width: '100%' }} disabled={pending}>
        {pending ? 'Please wait…' : 'Send me a link'}
      </button>
      <p className="muted small" style={{ marginTop: '1rem', textAlign: 'center' }}>
        Remembered it? <Link href="/sign-in">Sign in</Link>
      </p>
    </form>
  );
}
