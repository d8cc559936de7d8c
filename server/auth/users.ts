import { eq } from 'drizzle-orm';
import type { Database } from '@/db/client';
import { users } from '@/db/schema';
import { recordOwnAccountEvent } from '@/server/security-log/record';
import { hashPassword, needsRehash, verifyPassword } from './passwords';

export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

/** The user if the email and password match; undefined for every kind of mismatch. */
export async function authenticateWithPassword(db: Database, email: string, password: string) {
  const [user] = await db
    .select({ id: users.id, email: users.email, name: users.name, passwordHash: users.passwordHash })
    .from(users)
    .where(eq(users.email, normalizeEmail(email)))
    .limit(1);
  const ok = await verifyPassword(password, user?.passwordHash);
  if (!ok || !user) return undefined;
  // A hash of another cost (the seeds used 10) would let a wrong password answer faster
  // than an unknown e-mail, which is compared against a hash of today's cost: make it again.
  if (user.passwordHash && needsRehash(user.passwordHash)) {
    await db.update(users).set({ passwordHash: await hashPassword(password) }).where(eq(users.id, user.id));
  }
  return { id: user.id, email: user.email, name: user.name };
}

export class EmailTakenError extends Error {
  constructor() {
    super('An account with this email already exists.');
  }
}

export async function createUserWithPassword(db: Database, input: { email: string; password: string; name?: string }) {
  const passwordHash = await hashPassword(input.password);
  return db.transaction(async (tx) => {
    const [user] = await tx
      .insert(users)
      .values({ email: normalizeEmail(input.email), name: input.name?.trim() || null, passwordHash })
      .onConflictDoNothing()
      .returning({ id: users.id, email: users.email });
    if (!user) throw new EmailTakenError();
    // The new person is the actor, from the address the sign-up came from (the action's scope).
    await recordOwnAccountEvent(tx as unknown as Database, 'sign_up', user);
    return user;
  });
}

/** The id of the account with this e-mail, if any (for the security log of a failed sign-in). */
export async function userIdByEmail(db: Database, email: string): Promise<string | undefined> {
  const [row] = await db.select({ id: users.id }).from(users).where(eq(users.email, normalizeEmail(email))).limit(1);
  return row?.id;
}
