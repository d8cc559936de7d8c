import { hashToken, tokenFormat } from '@/server/api-keys/format';

/**
 * Calendar feed tokens: the API keys' format (server/api-keys/format.ts) with a prefix of
 * their own, `cdcal_` + 32 base62 + 6-character CRC32. Each kind checks its own prefix, so
 * a feed token is never taken for an API key nor an API key for a feed token, and they
 * live in different tables besides. Only the SHA-256 is stored.
 *
 *   cdcal_<32 random base62><6 checksum base62>   (44 characters)
 */
export const calendarTokenFormat = tokenFormat('cdcal_');

export function generateFeedToken(): string {
  return calendarTokenFormat.generate();
}

export function isWellFormedFeedToken(text: string): boolean {
  return calendarTokenFormat.isWellFormed(text);
}

export function hashFeedToken(token: string): string {
  return hashToken(token);
}

export function feedHintOf(token: string): string {
  return calendarTokenFormat.hint(token);
}
