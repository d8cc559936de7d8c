'use client';

import Link from 'next/link';
import { useActionState, useEffect, useState } from 'react';
import { signInWithPassword, signUpWithPassword, type FormState } from '@/server/actions/auth';
import { Field } from './form-field';

export function AuthForm({ mode, callbackUrl }: { mode: 'sign-in' | 'sign-up'; callbackUrl: string }) {
  const action = mode === 'sign-in' ? signInWithPassword : signUpWithPassword;
  const [state, formAction, pending] = useActionState<FormState, FormData>(action, {});
  const fieldError = (name: string) => state.fieldErrors?.[name];
  const secondsLeft = useRetryAfter(state.retryAfterSeconds, state);
  const other = mode === 'sign-in' ? '/sign-up' : '/sign-in';
  const query = `?callbackUrl=${encodeURIComponent(callbackUrl)}`;

  if (state.done) {
    return (
      <div role="status">
        <div className="alert alert-info">{state.done}</div>
        <p className="muted small" style={{ textAlign: 'center' }}>
          Nothing arrived? Look in your spam folder, or <Link href="/sign-up">try again</Link>. Already verified?{' '}
          <Link href={`/sign-in${query}`}>Sign in</Link>
        </p>
      </div>
    );
  }

  return (
    <form action={formAction} noValidate>
      <input type="hidden" name="callbackUrl" value={callbackUrl} />
      {state.error ? (
        <div className="alert alert-error" role="alert">
          {state.error}
        </div>
      ) : null}
      {mode === 'sign-up' ? (
        <Field name="name" label="Name" type="text" autoComplete="name" error={fieldError('name')} />
      ) : null}
      <Field
        name="email"
        label="Email"
        type="email"
        autoComplete="email"
        defaultValue={state.email}
        required
        error={fieldError('email')}
      />
      <Field
        name="password"
        label="Password"
        type="password"
        autoComplete={mode === 'sign-in' ? 'current-password' : 'new-password'}
        required
        hint={mode === 'sign-up' ? 'At least 10 characters.' : undefined}
        error={fieldError('password')}
      />
      {mode === 'sign-in' ? (
        <p className="small" style={{ marginTop: '-0.5rem', marginBottom: '1rem' }}>
          <Link href="/forgot-password">Forgot password?</Link>
        </p>
      ) : null}
      <button type="submit" className="btn btn-primary" style={{ width: '100%' }} disabled={pending || secondsLeft > 0}>
        {pending
          ? 'Please wait…'
          : secondsLeft > 0
            ? `Try again in ${secondsLeft} s`
            : mode === 'sign-in'
              ? 'Sign in'
              : 'Create account'}
      </button>
      <p className="muted small" style={{ marginTop: '1rem', textAlign: 'center' }}>
        {mode === 'sign-in' ? 'No account yet? ' : 'Already have an account? '}
        <Link href={`${other}${query}`}>{mode === 'sign-in' ? 'Create one' : 'Sign in'}</Link>
      </p>
    </form>
  );
}

/**
 * Seconds until the server's Retry-After has passed (0 when none): the submit button
 * waits that long, so that a refused attempt is not followed by more that are refused too.
 * `answer` is the form state itself, so that every new refusal restarts the count.
 */
export function useRetryAfter(retryAfterSeconds: number | undefined, answer: object): number {
  const [secondsLeft, setSecondsLeft] = useState(0);
  useEffect(() => {
    if (!retryAfterSeconds) return;
    const until = Date.now() + retryAfterSeconds * 1000;
    const tick = () => {
      const left = Math.max(0, Math.ceil((until - Date.now()) / 1000));
      setSecondsLeft(left);
      if (left === 0) clearInterval(timer);
    };
    const first = setTimeout(tick, 0);
    const timer = setInterval(tick, 1000);
    return () => {
      clearTimeout(first);
      clearInterval(timer);
    };
  }, [retryAfterSeconds, answer]);
  return secondsLeft;
}
