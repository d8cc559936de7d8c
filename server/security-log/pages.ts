import 'server-only';
import type { SessionUser } from '@/server/auth/session';
import { getDb } from '@/server/database';
import { securityLogPage } from './service';

/** The first page of the signed-in person's own security log. */
export async function ownSecurityLogPage(user: SessionUser) {
  return securityLogPage(await getDb(), { userId: user.id }, {});
}
