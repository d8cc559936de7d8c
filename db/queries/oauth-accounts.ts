import { and, eq } from 'drizzle-orm';
import type { Database } from '../client';
import { oauthAccounts, users } from '../schema';

export const oauthUserColumns = { id: users.id, email: users.email, name: users.name };

/** The user an account at `provider` is linked to, if any. */
export async function selectUserByOAuthAccount(db: Database, provider: string, providerAccountId: string) {
  const [row] = await db
    .select(oauthUserColumns)
    .from(oauthAccounts)
    .innerJoin(users, eq(users.id, oauthAccounts.userId))
    .where(and(eq(oauthAccounts.provider, provider), eq(oauthAccounts.providerAccountId, providerAccountId)))
    .limit(1);
  return row;
}

/**
 * A new user without a password and its link to the provider's account, in one
 * transaction: both or neither. Undefined when the e-mail address is already taken
 * (nothing is written then). Throws the database's unique violation (23505) when the
 * same provider account was linked meanwhile by a concurrent first sign-in.
 */
export async function insertUserWithOAuthAccount(
  db: Database,
  input: { provider: string; providerAccountId: string; email: string; name: string | null },
  /** Runs in the same transaction once the user exists (its sign-up event). */
  afterInsert?: (tx: Database, user: { id: string; email: string }) => Promise<void>,
) {
  return db.transaction(async (tx) => {
    const [user] = await tx
      .insert(users)
      // Verified (the column's default): only GitHub's verified address reaches here (server/auth/github-userinfo.ts).
      .values({ email: input.email, name: input.name })
      .onConflictDoNothing({ target: users.email })
      .returning(oauthUserColumns);
    if (!user) return undefined;
    await tx.insert(oauthAccounts).values({ provider: input.provider, providerAccountId: input.providerAccountId, userId: user.id });
    await afterInsert?.(tx as unknown as Database, user);
    return user;
  });
}
