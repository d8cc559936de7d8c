'use client';

import { useCallback, useMemo } from 'react';
import { trpc } from '../trpc-client';
import { csvHrefOf, SecurityLog, type SecurityLogPage } from './security-log';

/**
 * An organisation's security log, for its owners and admins: every event about the
 * organisation's keys (created, edited, rolled, revoked, expired, refused addresses), keys'
 * access removed by an admin, its policy, and its members' keys, calendar feeds and
 * webhook endpoints that read its contracts.
 */
export function OrganizationSecurityLog({ organizationId, initial }: { organizationId: string; initial: SecurityLogPage }) {
  const load = useCallback(
    (filter: { kinds?: string[]; from?: string; to?: string; cursor?: string }) => trpc.securityLog.organization.query({ organizationId, ...filter }),
    [organizationId],
  );
  const csvHref = useMemo(() => csvHrefOf(`/settings/organizations/${encodeURIComponent(organizationId)}/security-log/export`), [organizationId]);
  return <SecurityLog initial={initial} load={load} csvHref={csvHref} title="The organisation's security events" />;
}
