import type { Metadata } from 'next';
import { redirect } from 'next/navigation';
import { ChangePasswordForm } from '@/components/account/change-password-form';
import { DeleteAccountForm } from '@/components/account/delete-account-form';
import { accountPage } from '@/server/accounts/pages';
import { requireUser } from '@/server/auth/session';

export const metadata: Metadata = { title: 'Account' };

export default async function AccountPage() {
  const user = await requireUser('/settings/account');
  const account = await accountPage(user);
  if (!account) redirect('/sign-in');
  return (
    <>
      <section aria-labelledby="account-title">
        <h2 id="account-title" style={{ fontSize: '1.3rem' }}>
          Account
        </h2>
        <p className="muted">
          Signed in as <strong>{account.email}</strong>.
        </p>
      </section>

      <section aria-labelledby="change-password-title" style={{ maxWidth: 480, marginTop: '2rem' }}>
        <h3 id="change-password-title">Change password</h3>
        {account.hasPassword ? (
          <>
            <p className="muted small">Every other browser signed in to this account is signed out; this one stays signed in. We send you an e-mail about the change.</p>
            <ChangePasswordForm />
          </>
        ) : (
          <p className="muted">This account signs in with GitHub and has no password.</p>
        )}
      </section>

      <section id="delete" aria-labelledby="delete-account-title" style={{ maxWidth: 480, marginTop: '2.5rem' }}>
        <h3 id="delete-account-title">Delete account</h3>
        <p className="muted small">
          Deletes your personal contracts, API keys, calendar feeds and webhook endpoints, and your memberships, at once and for good.
          Contracts you added to an organisation stay with it. We send you an e-mail to confirm.
        </p>
        {account.blocks.length > 0 ? (
          <div className="alert alert-warning" role="status">
            You cannot delete your account while an organisation would be left without an owner. Make another member an owner first:
            <ul>
              {account.blocks.map((org) => (
                <li key={org.id}>
                  {org.name}: {org.reason === 'sole_owner' ? 'you are its only owner' : 'you are its last member'}
                </li>
              ))}
            </ul>
          </div>
        ) : (
          <DeleteAccountForm hasPassword={account.hasPassword} freshGitHubSignIn={account.freshGitHubSignIn} githubEnabled={account.githubEnabled} />
        )}
      </section>
    </>
  );
}
