import type { ReactNode } from 'react';
import { SettingsNav } from '@/components/settings-nav';

export default function SettingsLayout({ children }: { children: ReactNode }) {
  return (
    <main className="page">
      <div className="page-header">
        <h1>Settings</h1>
      </div>
      <div className="settings">
        <SettingsNav />
        <div>{children}</div>
      </div>
    </main>
  );
}
