import type { Database } from '@/db/client';
import { deleteMembership, upsertMembership, type Membership } from '@/db/queries/memberships';
import { inTransaction } from '@/server/security-log/record';
import { withAccessEvents } from './access-events';

/**
 * A membership starting and ending, as every path that changes one must do it: in one
 * transaction with the events that tell the person's personal API keys what they gained or
 * lost (./access-events.ts). Who may add or remove whom is the caller's to check; nothing
 * is cached, so the next request of any key, feed or endpoint on any instance reads the
 * new memberships (db/queries/token-scope.ts).
 */

export function joinOrganization(db: Database, userId: string, organizationId: string, role: Membership['role'] = 'member'): Promise<void> {
  return inTransaction(db, (tx) => withAccessEvents(tx, { organizationId, userIds: [userId] }, () => upsertMembership(tx, { userId, organizationId, role })));
}

/** Whether the person was a member. */
export function leaveOrganization(db: Database, userId: string, organizationId: string): Promise<boolean> {
  return inTransaction(db, (tx) => withAccessEvents(tx, { organizationId, userIds: [userId] }, () => deleteMembership(tx, userId, organizationId)));
}
