import type { Database } from '@/db/client';
import { memberships, organizations, users } from '@/db/schema';

/**
 * Two users and two organisations, for tests that compare totals across access paths: the
 * first user belongs to both organisations, the second to the second only. `tag` (one hex
 * digit) keeps each file's ids apart; `label` its e-mail addresses and names.
 */
export function twoMembers(tag: string, label: string) {
  const USERS = [`00000000-0000-4000-8000-0000000${tag}0001`, `00000000-0000-4000-8000-0000000${tag}0002`] as [string, string];
  const ORGS = [`00000000-0000-4000-8000-0000000${tag}00a1`, `00000000-0000-4000-8000-0000000${tag}00a2`] as [string, string];
  return {
    USERS,
    ORGS,
    /** What each can see, as the list's scope: the first user; the second; the second as if in no organisation. */
    scopes: [
      { userId: USERS[0], organizationIds: [ORGS[0], ORGS[1]] },
      { userId: USERS[1], organizationIds: [ORGS[1]] },
      { userId: USERS[1], organizationIds: [] as string[] },
    ],
    async insert(db: Database) {
      await db.insert(users).values(USERS.map((id, i) => ({ id, email: `${label}${i}@example.com` })));
      await db.insert(organizations).values(ORGS.map((id, i) => ({ id, name: `${label} ${i}` })));
      await db.insert(memberships).values([
        { userId: USERS[0], organizationId: ORGS[0] },
        { userId: USERS[0], organizationId: ORGS[1] },
        { userId: USERS[1], organizationId: ORGS[1] },
      ]);
    },
  };
}
