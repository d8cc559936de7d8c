import type { Database } from '@/db/client';
import { createToken, revokeToken } from '@/server/access/tokens';

/** A new API key of a user: the key and its id. */
export async function newApiKey(db: Database, userId: string, options: { name?: string; expiresInDays?: number | null; now?: Date } = {}) {
  const { secret, token } = await createToken(db, 'api_key', userId, { name: options.name ?? 'test', expiresInDays: options.expiresInDays === undefined ? 7 : options.expiresInDays }, options.now);
  return { key: secret, id: token.id };
}

/** A new calendar feed token of a user: the token (the file name without .ics) and its id. */
export async function newFeedToken(db: Database, userId: string, name = 'test feed') {
  const { secret, token } = await createToken(db, 'calendar_feed', userId, { name });
  return { token: secret, id: token.id };
}

export const revokeApiKey = (db: Database, userId: string, id: string) => revokeToken(db, 'api_key', userId, id);
export const revokeFeedToken = (db: Database, userId: string, id: string) => revokeToken(db, 'calendar_feed', userId, id);
