'use client';

import { useActionState } from 'react';
import { changePasswordAction, type AccountFormState } from '@/server/actions/account';
import { Field } from '@/components/form-field';

export function ChangePasswordForm() {
  const [state, formAction, pending] = useActionState<AccountFormState, FormData>(changePasswordAction, {});
  return (
    // A new key after each answer empties the fields (a password stays on screen no longer than needed).
    <form action={formAction} noValidate key={JSON.stringify(state)} aria-labelledby="change-password-title">
      {state.error ? (
        <div className="alert alert-error" role="alert">
          {state.error}
        </div>
      ) : null}
      {state.done ? (
        <div className="alert alert-info" role="status">
          {state.done}
        </div>
      ) : null}
      <Field required name="currentPassword" label="Current password" type="password" autoComplete="current-password" error={state.fieldErrors?.currentPassword} />
      <Field
        required
        name="newPassword"
        label="New password"
        type="password"
        autoComplete="new-password"
        hint="At least 10 characters, not your current one."
        error={state.fieldErrors?.newPassword}
      />
      <button type="submit" className="btn btn-primary" disabled={pending}>
        {pending ? 'Please wait…' : 'Change password'}
      </button>
    </form>
  );
}
