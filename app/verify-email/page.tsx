import type { Metadata } from 'next';
import { VerifyEmailForm } from '@/components/account/verify-email-form';

export const metadata: Metadata = { title: 'Verify your e-mail address', referrer: 'no-referrer' };

export default function VerifyEmailPage() {
  return (
    <main className="auth-wrap">
      <div className="card auth-card">
        <div className="card-body">
          <h1>Verify your e-mail address</h1>
          <p className="muted">Confirm that this address is yours to finish creating your account.</p>
          <VerifyEmailForm />
        </div>
      </div>
    </main>
  );
}
