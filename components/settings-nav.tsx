'use client';

import Link from 'next/link';
import { usePathname } from 'next/navigation';

const ENTRIES = [
  { href: '/settings/api-keys', label: 'API Keys' },
  { href: '/settings/calendar', label: 'Calendar feeds' },
  { href: '/settings/webhooks', label: 'Webhooks' },
  { href: '/settings/sessions', label: 'Sessions' },
  { href: '/settings/account', label: 'Account' },
  { href: '/settings/security-log', label: 'Security log' },
];

/** Settings' entries, then a page per organisation the user owns or administers (its keys). */
export function SettingsNav({ organizations = [] }: { organizations?: { id: string; name: string }[] }) {
  const pathname = usePathname();
  const entries = [
    ...ENTRIES,
    ...organizations.map((org) => ({ href: `/settings/organizations/${org.id}`, label: `Organisation: ${org.name}` })),
  ];
  return (
    <nav className="settings-nav" aria-label="Settings">
      {entries.map((entry) => (
        <Link key={entry.href} href={entry.href} aria-current={pathname === entry.href ? 'page' : undefined}>
          {entry.label}
        </Link>
      ))}
    </nav>
  );
}
