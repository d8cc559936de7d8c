import { eq, sql } from 'drizzle-orm';
import type { Database } from '../client';
import { users } from '../schema';

/**
 * The session version of a user (users.session_version), or undefined when the user does
 * not exist (deleted). One primary-key lookup: it runs on every use of a session.
 */
export async function selectSessionVersion(db: Database, userId: string): Promise<number | undefined> {
  const [row] = await db.select({ version: users.sessionVersion }).from(users).where(eq(users.id, userId)).limit(1);
  return row?.version;
}

/** Raises a user's session version: every session issued before stops working. */
/** Raises the user's session version; returns the user's e-mail, undefined for no such user. */
export async function bumpSessionVersion(db: Database, userId: string): Promise<string | undefined> {
  const [row] = await db
    .update(users)
    .set({ sessionVersion: sql`${users.sessionVersion} + 1` })
    .where(eq(users.id, userId))
    .returning({ email: users.email });
  return row?.email;
}
