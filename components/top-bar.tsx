import Link from 'next/link';
import { currentUser } from '@/server/auth/session';
import { SignOutButton } from './sign-out-button';

export async function TopBar() {
  const user = await currentUser();
  return (
    <header className="topbar">
      <div className="topbar-inner">
        <Link href="/" className="brand">
          <span className="brand-mark" aria-hidden="true" />
          Contract Data API
        </Link>
        <nav className="topnav" aria-label="Main">
          {user ? <Link href="/contracts">Contracts</Link> : null}
          {user ? <Link href="/settings/api-keys">Settings</Link> : null}
          <Link href="/docs/api">API reference</Link>
        </nav>
        <div className="user-menu">
          {user ? (
            <>
              <span className="user-email" title={user.email}>
                {user.email}
              </span>
              <SignOutButton />
            </>
          ) : (
            <Link className="btn btn-sm" href="/sign-in">
              Sign in
            </Link>
          )}
        </div>
      </div>
    </header>
  );
}
