'use client';

import Link from 'next/link';
import { usePathname } from 'next/navigation';

const ENTRIES = [
  { href: '/settings/api-keys', label: 'API Keys' },
  { href: '/settings/calendar', label: 'Calendar feeds' },
  { href: '/settings/webhooks', label: 'Webhooks' },
  { href: '/settings/sessions', label: 'Sessions' },
  { href: '/settings/security-log', label: 'Security log' },
];

export function SettingsNav() {
  const pathname = usePathname();
  return (
    <nav className="settings-nav" aria-label="Settings">
      {ENTRIES.map((entry) => (
        <Link key={entry.href} href={entry.href} aria-current={pathname === entry.href ? 'page' : undefined}>
          {entry.label}
        </Link>
      ))}
    </nav>
  );
}
