import type { TokenStatus } from '@/lib/tokens';

/**
 * Whether a token is active, expired or revoked at `now` (expiry to the millisecond).
 * The same rule is written in SQL by `countActiveTokens` (db/queries/tokens.ts, for the
 * limit of active tokens); tests/access/token-status.test.ts holds the two together.
 */
export function statusOf(token: { expiresAt: Date | null; revokedAt: Date | null }, now: Date): TokenStatus {
  if (token.revokedAt) return 'revoked';
  // Compared as full timestamps: a key expiring at 10:00:00.000 is refused from that instant.
  if (token.expiresAt && token.expiresAt.getTime() <= now.getTime()) return 'expired';
  return 'active';
}
