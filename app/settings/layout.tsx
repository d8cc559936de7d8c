import type { ReactNode } from 'react';
import { SettingsNav } from '@/components/settings-nav';
import { organizationsOf } from '@/server/access/pages';
import { currentUser } from '@/server/auth/session';

export default async function SettingsLayout({ children }: { children: ReactNode }) {
  // The organisations whose page the user may open (owner or admin); each page checks again.
  const user = await currentUser();
  const organizations = user ? (await organizationsOf(user)).filter((o) => o.role === 'owner' || o.role === 'admin') : [];
  return (
    <main className="page">
      <div className="page-header">
        <h1>Settings</h1>
      </div>
      <div className="settings">
        <SettingsNav organizations={organizations.map((o) => ({ id: o.id, name: o.name }))} />
        <div>{children}</div>
      </div>
    </main>
  );
}
