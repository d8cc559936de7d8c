import { and, eq, gt, isNull } from 'drizzle-orm';
import type { LinkTokenKind } from '@/lib/tokens';
import type { Database } from '../client';
import { accessTokens } from '../schema';

/**
 * Data access of the e-mailed single-use links (server/access/link-tokens.ts): rows of
 * access_tokens of the kinds email_verification and password_reset. "Used" is revoked_at.
 */

export async function insertLinkToken(
  db: Database,
  values: { kind: LinkTokenKind; userId: string; name: string; tokenHash: string; hint: string; createdAt: Date; expiresAt: Date },
): Promise<void> {
  await db.insert(accessTokens).values(values);
}

const usable = (kind: LinkTokenKind, tokenHash: string, now: Date) =>
  and(eq(accessTokens.tokenHash, tokenHash), eq(accessTokens.kind, kind), isNull(accessTokens.revokedAt), gt(accessTokens.expiresAt, now));

/** The user of a link that is unused and unexpired at `now`, without using it. */
export async function selectUsableLinkToken(db: Database, kind: LinkTokenKind, tokenHash: string, now: Date): Promise<{ userId: string } | undefined> {
  const [row] = await db.select({ userId: accessTokens.userId }).from(accessTokens).where(usable(kind, tokenHash, now)).limit(1);
  return row;
}

/**
 * Uses a link: one statement marks it used if it is unused, unexpired and (when given) the
 * user's, so that two concurrent uses cannot both succeed.
 */
export async function redeemLinkToken(db: Database, kind: LinkTokenKind, tokenHash: string, now: Date, userId?: string): Promise<{ userId: string } | undefined> {
  const [row] = await db
    .update(accessTokens)
    .set({ revokedAt: now, lastUsedAt: now })
    .where(and(usable(kind, tokenHash, now), userId ? eq(accessTokens.userId, userId) : undefined))
    .returning({ userId: accessTokens.userId });
  return row;
}

/** Revokes every unused link of a kind of the user's (a newer one replaces them). */
export async function revokeLinkTokensOf(db: Database, kind: LinkTokenKind, userId: string, now: Date): Promise<void> {
  await db
    .update(accessTokens)
    .set({ revokedAt: now })
    .where(and(eq(accessTokens.userId, userId), eq(accessTokens.kind, kind), isNull(accessTokens.revokedAt)));
}
