import type { Metadata } from 'next';
import { signOutEverywhereAction } from '@/server/actions/auth';
import { requireUser } from '@/server/auth/session';

export const metadata: Metadata = { title: 'Sessions' };

export default async function SessionsPage() {
  await requireUser('/settings/sessions');
  return (
    <section aria-labelledby="sessions-title">
      <h2 id="sessions-title" style={{ fontSize: '1.3rem' }}>
        Sessions
      </h2>
      <p className="muted" style={{ maxWidth: 680 }}>
        Each browser you signed in with keeps a session for up to seven days. Signing out anywhere ends the sessions of this
        account in every browser; use the button below if you signed in on a computer you no longer have, or think someone else
        has your session. API keys and calendar feeds are not affected: revoke them on their own pages.
      </p>
      <form action={signOutEverywhereAction}>
        <button type="submit" className="btn btn-danger">
          Sign out everywhere
        </button>
      </form>
    </section>
  );
}
