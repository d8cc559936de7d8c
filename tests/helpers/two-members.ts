import { sql } from 'drizzle-orm';
import type { Database } from '@/db/client';

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
    // Plain SQL naming only the columns every migration has: the migration tests insert
    // into a database of an earlier schema, where Drizzle's insert would name the newer
    // columns (email_verified_at, member_keys_allowed) as DEFAULT.
    async insert(db: Database) {
      for (const [i, id] of USERS.entries()) await db.execute(sql`insert into users (id, email) values (${id}, ${`${label}${i}@example.com`})`);
      for (const [i, id] of ORGS.entries()) await db.execute(sql`insert into organizations (id, name) values (${id}, ${`${label} ${i}`})`);
      for (const [userId, organizationId] of [[USERS[0], ORGS[0]], [USERS[0], ORGS[1]], [USERS[1], ORGS[1]]] as const) {
        await db.execute(sql`insert into memberships (user_id, organization_id) values (${userId}, ${organizationId})`);
      }
    },
  };
}
