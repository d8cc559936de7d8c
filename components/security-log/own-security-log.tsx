'use client';

import { trpc } from '../trpc-client';
import { csvHrefOf, SecurityLog, type SecurityLogPage } from './security-log';

const load = (filter: { kinds?: string[]; from?: string; to?: string; cursor?: string }) => trpc.securityLog.own.query(filter);
const csvHref = csvHrefOf('/settings/security-log/export');

/** Settings → Security log: the signed-in person's own events. */
export function OwnSecurityLog({ initial }: { initial: SecurityLogPage }) {
  return <SecurityLog initial={initial} load={load} csvHref={csvHref} title="Your security events" />;
}
