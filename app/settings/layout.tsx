import type { ReactNode } from 'react';
import { UnverifiedNotice } from '@/components/account/resend-verification';
import { SettingsNav } from '@/components/settings-nav';
import { organizationsOf } from '@/server/access/pages';
import { currentUser } from '@/server/auth/session';
import { unverifiedNotice } from '@/server/auth/verification-notice';

export default async function SettingsLayout({ children }: { children: ReactNode }) {
  // The organisations whose page the user may open (owner or admin); each page checks again.
  const user = await currentUser();
  const organizations = user ? (await organizationsOf(user)).filter((o) => o.role === 'owner' || o.role === 'admin') : [];
  // Until the address is verified, every settings page says why creating is refused.
  const notice = await unverifiedNotice();
  return (
    <main className="page">
      <div className="page-header">
        <h1>Settings</h1>
      </div>
      <div className="settings">
        <SettingsNav organizations={organizations.map((o) => ({ id: o.id, name: o.name }))} />
        <div>
          {notice ? <UnverifiedNotice email={notice.email} message={notice.message} /> : null}
          {children}
        </div>
      </div>
    </main>
  );
}
