import { and, asc, eq, isNull, sql } from 'drizzle-orm';
import type { Database } from '../client';
import { accessTokens, contractCounts, contractDateCounts, contractUpdatedCounts, contracts, memberships, organizations, users } from '../schema';

/**
 * Data access of a person's own account: the row a password change or a deletion starts
 * from, the password change itself, and the deletion. The decisions (who may, what is
 * checked first, what is announced) are server/accounts/'s.
 */

export interface OwnAccountRow {
  id: string;
  email: string;
  name: string | null;
  passwordHash: string | null;
}

export async function selectAccount(db: Database, userId: string): Promise<OwnAccountRow | undefined> {
  const [row] = await db
    .select({ id: users.id, email: users.email, name: users.name, passwordHash: users.passwordHash })
    .from(users)
    .where(eq(users.id, userId))
    .limit(1);
  return row;
}

/**
 * The stored password hash, the user's row locked until the transaction ends: a change of
 * password compares it with the hash it checked the current password against.
 */
export async function lockPasswordHash(db: Database, userId: string): Promise<string | null | undefined> {
  const [row] = await db.select({ passwordHash: users.passwordHash }).from(users).where(eq(users.id, userId)).for('update');
  return row ? row.passwordHash : undefined;
}

export interface OrganizationBlock {
  id: string;
  name: string;
  /** 'sole_owner': the person is its only owner; 'last_member': nobody else belongs to it. */
  reason: 'sole_owner' | 'last_member';
}

/**
 * The organisations that stop the person's deletion: those they own with no other owner,
 * and those they are the last member of (their contracts would have nobody to go to).
 */
export async function selectDeletionBlocks(db: Database, userId: string): Promise<OrganizationBlock[]> {
  const rows = await db
    .select({
      id: organizations.id,
      name: organizations.name,
      role: memberships.role,
      otherOwners: sql<number>`(select count(*) from ${memberships} o where o.organization_id = ${memberships.organizationId} and o.user_id <> ${userId} and o.role = 'owner')`.mapWith(Number),
      otherMembers: sql<number>`(select count(*) from ${memberships} o where o.organization_id = ${memberships.organizationId} and o.user_id <> ${userId})`.mapWith(Number),
    })
    .from(memberships)
    .innerJoin(organizations, eq(organizations.id, memberships.organizationId))
    .where(eq(memberships.userId, userId))
    .orderBy(asc(organizations.name), asc(organizations.id));
  const blocks: OrganizationBlock[] = [];
  for (const row of rows) {
    if (row.role === 'owner' && row.otherOwners === 0) blocks.push({ id: row.id, name: row.name, reason: 'sole_owner' });
    else if (row.otherMembers === 0) blocks.push({ id: row.id, name: row.name, reason: 'last_member' });
  }
  return blocks;
}

/**
 * Deletes the person in the caller's transaction: their organisations' contracts they
 * created go to another member of that organisation (an owner first, then an admin, then
 * the longest member), their personal contracts and the counters of them go, and the row
 * itself, whose foreign keys take their memberships, GitHub links, API keys, calendar feeds
 * and webhook endpoints (with their deliveries) along. Returns the ids of the API keys and
 * feeds it removed, for the announcement that drops them from every instance's cache.
 * Organisation rows and other people's rows are never touched.
 */
export async function deleteAccountRows(db: Database, userId: string): Promise<{ tokenIds: string[] } | undefined> {
  // The row lock serialises this deletion with token creation (withUserLocked) and with a
  // second deletion of the same person.
  const [locked] = await db.select({ id: users.id }).from(users).where(eq(users.id, userId)).for('update');
  if (!locked) return undefined;
  const tokens = await db
    .select({ id: accessTokens.id })
    .from(accessTokens)
    .where(and(eq(accessTokens.userId, userId), isNull(accessTokens.revokedAt)));
  await db.execute(sql`
    update ${contracts} c set owner_id = (
      select m.user_id from ${memberships} m
      where m.organization_id = c.organization_id and m.user_id <> ${userId}
      order by case m.role when 'owner' then 0 when 'admin' then 1 else 2 end, m.created_at, m.user_id
      limit 1)
    where c.owner_id = ${userId} and c.organization_id is not null
      and exists (select 1 from ${memberships} m where m.organization_id = c.organization_id and m.user_id <> ${userId})`);
  await db.delete(contracts).where(and(eq(contracts.ownerId, userId), isNull(contracts.organizationId)));
  for (const table of [contractCounts, contractDateCounts, contractUpdatedCounts]) {
    await db.delete(table).where(and(eq(table.personal, true), eq(table.scopeId, userId)));
  }
  await db.delete(users).where(eq(users.id, userId));
  return { tokenIds: tokens.map((t) => t.id) };
}
