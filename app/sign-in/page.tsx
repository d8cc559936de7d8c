import type { Metadata } from 'next';
import { redirect } from 'next/navigation';
import { AuthForm } from '@/components/auth-form';
import { signInWithGitHub } from '@/server/actions/auth';
import { githubEnabled } from '@/server/auth/next-auth';
import { safeCallbackUrl } from '@/server/auth/callback-url';
import { currentUser } from '@/server/auth/session';
import { signInErrorMessage } from '@/server/auth/sign-in-errors';

export const metadata: Metadata = { title: 'Sign in' };

export default async function SignInPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const params = await searchParams;
  const callbackUrl = safeCallbackUrl(params.callbackUrl);
  if (await currentUser()) redirect(callbackUrl);
  // A refused GitHub sign-in comes back here with ?error=… (server/auth/next-auth.ts).
  const error = signInErrorMessage(params.error);
  // After a reset through an e-mailed link (server/actions/accounts.ts); a fixed text, never the parameter's.
  const notice = params.notice === 'password-changed' ? 'Your password was changed and every session ended. Sign in with the new password.' : undefined;
  return (
    <main className="auth-wrap">
      <div className="card auth-card">
        <div className="card-body">
          <h1>Sign in</h1>
          <p className="muted">Manage API keys for your contract data.</p>
          {notice ? (
            <div className="alert alert-info" role="status">
              {notice}
            </div>
          ) : null}
          {error ? (
            <div className="alert alert-error" role="alert">
              {error}
            </div>
          ) : null}
          {githubEnabled() ? (
            <>
              <form action={signInWithGitHub}>
                <input type="hidden" name="callbackUrl" value={callbackUrl} />
                <button type="submit" className="btn" style={{ width: '100%' }}>
                  Continue with GitHub
                </button>
              </form>
              <div className="divider">or</div>
            </>
          ) : null}
          <AuthForm mode="sign-in" callbackUrl={callbackUrl} />
        </div>
      </div>
    </main>
  );
}
