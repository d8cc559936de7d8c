'use client';

import { trpc } from '../trpc-client';
import { SecurityLog, type SecurityLogFilterState, type SecurityLogPage } from './security-log';

const load = (filter: { kinds?: string[]; from?: string; to?: string; cursor?: string }) => trpc.securityLog.own.query(filter);

function csvHref(filter: SecurityLogFilterState): string {
  const params = new URLSearchParams();
  if (filter.kind) params.append('kind', filter.kind);
  if (filter.from) params.set('from', filter.from);
  if (filter.to) params.set('to', filter.to);
  const query = params.toString();
  return `/settings/security-log/export${query ? `?${query}` : ''}`;
}

/** Settings → Security log: the signed-in person's own events. */
export function OwnSecurityLog({ initial }: { initial: SecurityLogPage }) {
  return <SecurityLog initial={initial} load={load} csvHref={csvHref} title="Your security events" />;
}
