import type { ReactNode } from 'react';
import { UnverifiedNotice } from '@/components/account/resend-verification';
import { SettingsNav } from '@/components/settings-nav';
import { unverifiedNotice } from '@/server/auth/verification-notice';

export default async function SettingsLayout({ children }: { children: ReactNode }) {
  // Until the address is verified, every settings page says why creating is refused.
  const notice = await unverifiedNotice();
  return (
    <main className="page">
      <div className="page-header">
        <h1>Settings</h1>
      </div>
      <div className="settings">
        <SettingsNav />
        <div>
          {notice ? <UnverifiedNotice email={notice.email} message={notice.message} /> : null}
          {children}
        </div>
      </div>
    </main>
  );
}
