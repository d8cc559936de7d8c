import type { Metadata } from 'next';
import { OwnSecurityLog } from '@/components/security-log/own-security-log';
import { requireUser } from '@/server/auth/session';
import { ownSecurityLogPage } from '@/server/security-log/pages';

export const metadata: Metadata = { title: 'Security log' };

export default async function SecurityLogPage() {
  const user = await requireUser('/settings/security-log');
  const initial = await ownSecurityLogPage(user);
  return (
    <section aria-labelledby="security-log-title">
      <h2 id="security-log-title" style={{ fontSize: '1.3rem' }}>
        Security log
      </h2>
      <p className="muted" style={{ maxWidth: 680 }}>
        Every sensitive action on your account: sign-ins (and failed attempts), sign-outs, your API keys, calendar feeds and
        webhook endpoints. Each event names who did it, from which address and with which browser or tool. Events are kept 400
        days and cannot be changed.
      </p>
      <OwnSecurityLog initial={initial} />
    </section>
  );
}
