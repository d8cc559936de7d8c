'use client';

import { useCallback } from 'react';
import { trpc } from '../trpc-client';
import { SecurityLog, type SecurityLogPage } from './security-log';

/**
 * An organisation's security log, for its owners and admins: every event about the
 * organisation's keys (created, edited, rolled, revoked, expired, refused addresses), keys'
 * access removed by an admin, and its policy. For the organisation's settings page:
 * `<OrganizationSecurityLog organizationId={id} initial={await organizationSecurityLogPage(user, id)} />`.
 */
export function OrganizationSecurityLog({ organizationId, initial }: { organizationId: string; initial: SecurityLogPage }) {
  const load = useCallback(
    (filter: { kinds?: string[]; from?: string; to?: string; cursor?: string }) => trpc.securityLog.organization.query({ organizationId, ...filter }),
    [organizationId],
  );
  return <SecurityLog initial={initial} load={load} title="The organisation's security events" />;
}
