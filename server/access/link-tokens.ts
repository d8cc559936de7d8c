import type { Database } from '@/db/client';
import { insertLinkToken, revokeLinkTokensOf, selectUsableLinkToken, redeemLinkToken } from '@/db/queries/link-tokens';
import type { LinkTokenKind } from '@/lib/tokens';
import { hashToken, TOKEN_FORMATS } from './token-format';

/**
 * The single-use links the app e-mails, in the same table, format and hashing as API keys
 * and calendar feed tokens (./tokens.ts, ./token-format.ts): 190 random bits with a kind
 * prefix and a checksum, only the SHA-256 stored, the kind checked on every lookup (a
 * verification link never resets a password, and neither is ever an API key).
 *
 * - email_verification (`cdver_…`): 24 hours; several may be valid at once (a resent link
 *   does not break one that arrives late).
 * - password_reset (`cdpwr_…`): 30 minutes; a newer one revokes the older ones, and any
 *   change of the user's password hash revokes them all (a trigger of migration 0011, so
 *   that no code path that sets a password can forget to).
 *
 * A link carries the token only: no address, no user id.
 */
export const LINK_LIFETIME_MS: Record<LinkTokenKind, number> = {
  email_verification: 24 * 3600_000,
  password_reset: 30 * 60_000,
};

const NAMES: Record<LinkTokenKind, string> = { email_verification: 'E-mail verification link', password_reset: 'Password reset link' };

/** Creates a link's token for `userId` (inside the transaction that queues its e-mail) and returns it: the only moment it exists in clear. */
export async function issueLinkToken(tx: Database, kind: LinkTokenKind, userId: string, now = new Date()): Promise<string> {
  const format = TOKEN_FORMATS[kind];
  const token = format.generate();
  if (kind === 'password_reset') await revokeLinkTokensOf(tx, kind, userId, now);
  await insertLinkToken(tx, {
    kind,
    userId,
    name: NAMES[kind],
    tokenHash: hashToken(token),
    hint: format.hint(token),
    createdAt: now,
    expiresAt: new Date(now.getTime() + LINK_LIFETIME_MS[kind]),
  });
  return token;
}

/** The user a presented link is for, if it is well-formed, of this kind, unused and unexpired; nothing is changed. */
export async function checkLinkToken(db: Database, kind: LinkTokenKind, presented: unknown, now = new Date()): Promise<{ userId: string } | undefined> {
  if (typeof presented !== 'string' || !TOKEN_FORMATS[kind].isWellFormed(presented)) return undefined;
  return selectUsableLinkToken(db, kind, hashToken(presented), now);
}

/**
 * Uses a presented link, once: marks it used and returns its user, or undefined for every
 * kind of bad link (malformed, tampered, unknown, other kind, used, expired, replaced, or
 * not `userId`'s when given). Call it inside the transaction that makes the change, so
 * that a failed change leaves the link usable.
 */
export async function redeemLink(tx: Database, kind: LinkTokenKind, presented: unknown, now = new Date(), userId?: string): Promise<{ userId: string } | undefined> {
  if (typeof presented !== 'string' || !TOKEN_FORMATS[kind].isWellFormed(presented)) return undefined;
  return redeemLinkToken(tx, kind, hashToken(presented), now, userId);
}

/** Revokes the user's unused links of a kind. */
export function revokeLinks(tx: Database, kind: LinkTokenKind, userId: string, now = new Date()): Promise<void> {
  return revokeLinkTokensOf(tx, kind, userId, now);
}
