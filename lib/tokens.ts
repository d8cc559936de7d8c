/**
 * The two kinds of secret tokens a user creates in Settings, and their limits: the
 * service enforces them and the settings pages show them.
 *
 * - API keys (`cdapi_…`) authenticate the REST API; they may expire.
 * - Calendar feed tokens (`cdcal_…`) open one calendar feed through its address, because
 *   calendar apps cannot send headers; they never expire, they are revoked.
 */
export type TokenKind = 'api_key' | 'calendar_feed';

/**
 * The single-use links the app e-mails (server/access/link-tokens.ts), in the same table
 * and format as the tokens above, with prefixes of their own:
 * - `cdver_…`: verifies an e-mail address, valid 24 hours;
 * - `cdpwr_…`: sets a new password, valid 30 minutes, replaced by a newer one and revoked
 *   by any change of the password.
 */
export type LinkTokenKind = 'email_verification' | 'password_reset';

export const TOKEN_NAME_MAX_LENGTH = 64;

/** Active (unrevoked, unexpired) tokens per user and kind. */
export const MAX_ACTIVE_TOKENS: Record<TokenKind, number> = {
  // Enough for every integration of a team member.
  api_key: 25,
  // Enough for every calendar app of a team member.
  calendar_feed: 10,
};

/** Expiry choices offered for API keys, in days; null means the key never expires. */
export const API_KEY_EXPIRY_CHOICES = [7, 30, 90, 365, null] as const;
export type ApiKeyExpiry = (typeof API_KEY_EXPIRY_CHOICES)[number];
export const DEFAULT_API_KEY_EXPIRY: ApiKeyExpiry = 90;

export type TokenStatus = 'active' | 'expired' | 'revoked';

/** A token as the settings pages list it: never the secret, only its hint. */
export interface TokenSummary {
  id: string;
  name: string;
  hint: string;
  createdAt: Date;
  lastUsedAt: Date | null;
  expiresAt: Date | null;
  revokedAt: Date | null;
  status: TokenStatus;
}
