import { and, eq, isNull } from 'drizzle-orm';
import type { Database } from '../client';
import { users } from '../schema';

/** Data access of the account flows (server/auth/accounts.ts): users by address or id, verification, password. */

export interface AccountRow {
  id: string;
  email: string;
  emailVerifiedAt: Date | null;
}

const accountColumns = { id: users.id, email: users.email, emailVerifiedAt: users.emailVerifiedAt };

/** By the normalised address (the unique index). */
export async function selectAccountByEmail(db: Database, email: string): Promise<AccountRow | undefined> {
  const [row] = await db.select(accountColumns).from(users).where(eq(users.email, email)).limit(1);
  return row;
}

export async function selectAccountById(db: Database, id: string): Promise<AccountRow | undefined> {
  const [row] = await db.select(accountColumns).from(users).where(eq(users.id, id)).limit(1);
  return row;
}

/** A new password account, unverified; undefined when the address is taken (nothing written). */
export async function insertPasswordAccount(db: Database, values: { email: string; name: string | null; passwordHash: string }): Promise<AccountRow | undefined> {
  const [row] = await db.insert(users).values({ ...values, emailVerifiedAt: null }).onConflictDoNothing({ target: users.email }).returning(accountColumns);
  return row;
}

/** Marks the address verified (once: the first time is kept). */
export async function markEmailVerified(db: Database, userId: string, now: Date): Promise<void> {
  await db.update(users).set({ emailVerifiedAt: now }).where(and(eq(users.id, userId), isNull(users.emailVerifiedAt)));
}

/** Sets a new password hash (the trigger of migration 0011 revokes the user's reset links). */
export async function updatePasswordHash(db: Database, userId: string, passwordHash: string): Promise<void> {
  await db.update(users).set({ passwordHash }).where(eq(users.id, userId));
}
