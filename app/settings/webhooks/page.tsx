import type { Metadata } from 'next';
import Link from 'next/link';
import { onTheWire } from '@/components/webhooks/types';
import { WebhooksManager } from '@/components/webhooks/webhooks-manager';
import { DISABLE_AFTER_FAILING_DAYS } from '@/lib/webhooks';
import { organizationsOf } from '@/server/access/pages';
import { requireUser } from '@/server/auth/session';
import { webhooksPage } from '@/server/webhooks/pages';

export const metadata: Metadata = { title: 'Webhooks' };

export default async function WebhooksPage() {
  const user = await requireUser('/settings/webhooks');
  const [endpoints, organizations] = await Promise.all([webhooksPage(user), organizationsOf(user)]);
  return (
    <section aria-labelledby="webhooks-title">
      <h2 id="webhooks-title" style={{ fontSize: '1.3rem' }}>
        Webhooks
      </h2>
      <p className="muted" style={{ maxWidth: 680 }}>
        A webhook endpoint hears about your contracts as they change, instead of polling the API: new, changed and deleted
        contracts, finished extractions, and renewals and expirations coming up. Each request is a JSON POST signed per{' '}
        <a href="https://www.standardwebhooks.com/">Standard Webhooks</a>, for the contracts you can see when it is sent. Failed
        deliveries are retried for about a day; an endpoint that fails for {DISABLE_AFTER_FAILING_DAYS} days is disabled. See the{' '}
        <Link href="/docs/api">API reference</Link> for the events and a receiver.
      </p>
      <WebhooksManager
        initialEndpoints={endpoints.map(onTheWire)}
        organizations={organizations.map((o) => ({ id: o.id, name: o.name, role: o.role }))}
      />
    </section>
  );
}
