import type { Metadata } from 'next';
import { ForgotPasswordForm } from '@/components/account/forgot-password-form';

export const metadata: Metadata = { title: 'Forgot password' };

export default function ForgotPasswordPage() {
  return (
    <main className="auth-wrap">
      <div className="card auth-card">
        <div className="card-body">
          <h1>Forgot your password?</h1>
          <p className="muted">Enter the address of your account: we e-mail it a link to set a new password.</p>
          <ForgotPasswordForm />
        </div>
      </div>
    </main>
  );
}
