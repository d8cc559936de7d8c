'use client';

import { useActionState } from 'react';
import { resendVerificationAction } from '@/server/actions/accounts';
import type { FormState } from '@/server/actions/auth';

/** Settings' notice while the address is unverified: why, and "Send the link again". */
export function UnverifiedNotice({ email, message }: { email: string; message: string }) {
  const [state, formAction, pending] = useActionState<FormState, FormData>(resendVerificationAction, {});
  return (
    <div className="alert alert-warning" role="status" style={{ marginBottom: '1.25rem' }}>
      <p style={{ margin: 0 }}>
        <strong>{email} is not verified yet.</strong> {message}
      </p>
      {state.done ? <p style={{ margin: '0.5rem 0 0' }}>{state.done}</p> : null}
      {state.error ? <p style={{ margin: '0.5rem 0 0' }}>{state.error}</p> : null}
      <form action={formAction} style={{ marginTop: '0.5rem' }}>
        <button type="submit" className="btn" disabled={pending}>
          {pending ? 'Sending…' : 'Send the link again'}
        </button>
      </form>
    </div>
  );
}
