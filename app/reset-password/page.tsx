import type { Metadata } from 'next';
import { ResetPasswordForm } from '@/components/account/reset-password-form';

export const metadata: Metadata = { title: 'Set a new password', referrer: 'no-referrer' };

export default function ResetPasswordPage() {
  return (
    <main className="auth-wrap">
      <div className="card auth-card">
        <div className="card-body">
          <h1>Set a new password</h1>
          <p className="muted">Setting it signs you out everywhere; then sign in with the new password.</p>
          <ResetPasswordForm />
        </div>
      </div>
    </main>
  );
}
