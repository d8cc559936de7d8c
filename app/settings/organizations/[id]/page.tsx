import type { Metadata } from 'next';
import { notFound } from 'next/navigation';
import { OrganizationKeys } from '@/components/organizations/organization-keys';
import { toOrganizationKeysView } from '@/components/organizations/view';
import { OrganizationSecurityLog } from '@/components/security-log/organization-security-log';
import { organizationKeysPage } from '@/server/access/pages';
import { requireUser } from '@/server/auth/session';
import { organizationSecurityLogPage } from '@/server/security-log/pages';

export const metadata: Metadata = { title: 'Organisation' };

/**
 * An organisation's keys, for its owners and admins. Anyone else (a member who is not
 * an owner or admin, a stranger, an unknown id) gets the 404 page: the page does not say
 * whether the organisation exists (docs/keys.md "In the app").
 */
export default async function OrganizationPage({ params }: { params: Promise<{ id: string }> }) {
  const { id } = await params;
  const user = await requireUser(`/settings/organizations/${encodeURIComponent(id)}`);
  const data = await organizationKeysPage(user, id);
  if (!data) notFound();
  const view = toOrganizationKeysView(data);
  const log = await organizationSecurityLogPage(user, id);
  return (
    <section aria-labelledby="organization-title">
      <h2 id="organization-title" style={{ fontSize: '1.3rem' }}>
        {view.organization.name}
      </h2>
      <p className="muted" style={{ maxWidth: 680 }}>
        Every API key that can read {view.organization.name}&rsquo;s contracts today: the organisation&rsquo;s own keys and the
        personal keys of its members. You see this page as an owner or admin of {view.organization.name}.
      </p>
      <OrganizationKeys initial={view} />
      <section aria-labelledby="organization-log-title" style={{ marginTop: '2.5rem' }}>
        <h3 id="organization-log-title" style={{ fontSize: '1.1rem' }}>
          Security log
        </h3>
        <p className="muted" style={{ maxWidth: 680 }}>
          Every event about {view.organization.name}&rsquo;s keys and policy, access removed from members&rsquo; keys, and the
          members&rsquo; keys, calendar feeds and webhook endpoints that read its contracts: who, when, from which address. Kept
          400 days; no one can change them.
        </p>
        <OrganizationSecurityLog organizationId={view.organization.id} initial={log} />
      </section>
    </section>
  );
}
