import { eq } from 'drizzle-orm';
import type { Database } from '@/db/client';
import { users } from '@/db/schema';
import { hashPassword, verifyPassword } from './passwords';

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
  return ok && user ? { id: user.id, email: user.email, name: user.name } : undefined;
}

export class EmailTakenError extends Error {
  constructor() {
    super('An account with this email already exists.');
  }
}

export async function createUserWithPassword(db: Database, input: { email: string; password: string; name?: string }) {
  const passwordHash = await hashPassword(input.password);
  const [user] = await db
    .insert(users)
    .values({ email: normalizeEmail(input.email), name: input.name?.trim() || null, passwordHash })
    .onConflictDoNothing()
    .returning({ id: users.id, email: users.email });
  if (!user) throw new EmailTakenError();
  return user;
}

/** The user for an OAuth sign-in: found by email, or created without a password. */
export async function findOrCreateOAuthUser(db: Database, email: string, name: string | null | undefined) {
  const normalized = normalizeEmail(email);
  await db.insert(users).values({ email: normalized, name: name ?? null }).onConflictDoNothing();
  const [user] = await db.select({ id: users.id }).from(users).where(eq(users.email, normalized));
  return user!;
}
