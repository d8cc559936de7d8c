import 'server-only';
import type { SessionUser } from '@/server/auth/session';
import { getDb } from '@/server/database';
import { assertOrganizationAdmin } from '@/server/access/keys';
import { securityLogPage } from './service';

/** The first page of the signed-in person's own security log. */
export async function ownSecurityLogPage(user: SessionUser) {
  return securityLogPage(await getDb(), { userId: user.id }, {});
}

/** The first page of an organisation's security log, for its owners and admins (403 otherwise). */
export async function organizationSecurityLogPage(user: SessionUser, organizationId: string) {
  const db = await getDb();
  await assertOrganizationAdmin(db, user.id, organizationId);
  return securityLogPage(db, { organizationId }, {});
}
