import type { Metadata } from 'next';
import { redirect } from 'next/navigation';
import { AuthForm } from '@/components/auth-form';
import { safeCallbackUrl } from '@/server/auth/callback-url';
import { currentUser } from '@/server/auth/session';

export const metadata: Metadata = { title: 'Create account' };

export default async function SignUpPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const callbackUrl = safeCallbackUrl((await searchParams).callbackUrl);
  if (await currentUser()) redirect(callbackUrl);
  return (
    <main className="auth-wrap">
      <div className="card auth-card">
        <div className="card-body">
          <h1>Create your account</h1>
          <p className="muted">Then create an API key under Settings.</p>
          <AuthForm mode="sign-up" callbackUrl={callbackUrl} />
        </div>
      </div>
    </main>
  );
}
