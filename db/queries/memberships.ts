import { asc, eq, sql } from 'drizzle-orm';
import { runStatement, type Database, type Statement } from '../client';
import { memberships, organizations } from '../schema';

export interface Membership {
  id: string;
  name: string;
  role: 'owner' | 'admin' | 'member';
}

/**
 * The organisations a user belongs to, by name: the one membership query. It is read at
 * request time (no cache), so that a removed membership is gone on the next request; the
 * primary key (user, organisation) serves it.
 */
export function membershipsStatement(userId: string): Statement<Membership[]> {
  return {
    name: 'memberships.of-user',
    build: (db) =>
      db
        .select({ id: organizations.id, name: organizations.name, role: memberships.role })
        .from(memberships)
        .innerJoin(organizations, eq(organizations.id, memberships.organizationId))
        .where(eq(memberships.userId, sql.placeholder('userId')))
        .orderBy(asc(organizations.name), asc(organizations.id)),
    values: { userId },
  };
}

export function selectMemberships(db: Database, userId: string): Promise<Membership[]> {
  return runStatement(db, membershipsStatement(userId));
}
