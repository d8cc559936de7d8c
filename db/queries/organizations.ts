import { asc, eq } from 'drizzle-orm';
import type { Database } from '../client';
import { memberships, organizations } from '../schema';

/** The organisations a user belongs to, with names and roles, by name. */
export function organizationsOf(db: Database, userId: string) {
  return db
    .select({ id: organizations.id, name: organizations.name, role: memberships.role })
    .from(memberships)
    .innerJoin(organizations, eq(organizations.id, memberships.organizationId))
    .where(eq(memberships.userId, userId))
    .orderBy(asc(organizations.name));
}
