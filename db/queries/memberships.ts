import { asc, eq, sql } from 'drizzle-orm';
import { runStatement, type Database, type Statement } from '../client';
import { memberships, organizations, users } from '../schema';

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

/** Organisation names by id (for lists that name the organisations a token reaches). */
export async function selectOrganizationNames(db: Database, ids: readonly string[]): Promise<Map<string, string>> {
  const unique = [...new Set(ids)];
  if (unique.length === 0) return new Map();
  const rows = await db
    .select({ id: organizations.id, name: organizations.name })
    .from(organizations)
    .where(sql`${organizations.id} IN (${sql.join(unique.map((id) => sql`${id}::uuid`), sql`, `)})`);
  return new Map(rows.map((r) => [r.id, r.name]));
}

/** The members of an organisation (whose keys its policy reaches). */
export async function selectMemberIds(db: Database, organizationId: string): Promise<string[]> {
  const rows = await db.select({ userId: memberships.userId }).from(memberships).where(eq(memberships.organizationId, organizationId));
  return rows.map((r) => r.userId);
}

/** Makes a user a member (or changes the role of one already). */
export async function upsertMembership(db: Database, values: { userId: string; organizationId: string; role: Membership['role'] }): Promise<void> {
  await db.insert(memberships).values(values).onConflictDoUpdate({ target: [memberships.userId, memberships.organizationId], set: { role: values.role } });
}

/** Ends a membership; whether there was one. */
export async function deleteMembership(db: Database, userId: string, organizationId: string): Promise<boolean> {
  const rows = await db
    .delete(memberships)
    .where(sql`${memberships.userId} = ${userId}::uuid AND ${memberships.organizationId} = ${organizationId}::uuid`)
    .returning({ userId: memberships.userId });
  return rows.length > 0;
}

/** A user's role in an organisation, or undefined when not a member. */
export async function selectRole(db: Database, userId: string, organizationId: string): Promise<Membership['role'] | undefined> {
  const [row] = await db
    .select({ role: memberships.role })
    .from(memberships)
    .where(sql`${memberships.userId} = ${userId}::uuid AND ${memberships.organizationId} = ${organizationId}::uuid`);
  return row?.role;
}

/** E-mail addresses of users by id (who created an organisation's keys). */
export async function selectUserEmails(db: Database, ids: readonly string[]): Promise<Map<string, string>> {
  const unique = [...new Set(ids)];
  if (unique.length === 0) return new Map();
  const rows = await db
    .select({ id: users.id, email: users.email })
    .from(users)
    .where(sql`${users.id} IN (${sql.join(unique.map((id) => sql`${id}::uuid`), sql`, `)})`);
  return new Map(rows.map((r) => [r.id, r.email]));
}
