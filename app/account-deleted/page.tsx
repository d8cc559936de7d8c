import type { Metadata } from 'next';
import Link from 'next/link';

export const metadata: Metadata = { title: 'Account deleted' };

export default function AccountDeletedPage() {
  return (
    <main className="auth-wrap">
      <div className="card auth-card">
        <div className="card-body">
          <h1>Your account was deleted</h1>
          <p className="muted">
            Your contracts, API keys, calendar feeds and webhook endpoints are gone, and every session has ended. An e-mail
            confirming it is on its way.
          </p>
          <p>
            <Link href="/">Back to the start page</Link>
          </p>
        </div>
      </div>
    </main>
  );
}
