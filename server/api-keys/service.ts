import { and, eq, isNull } from 'drizzle-orm';
import type { Database } from '@/db/client';
import { apiKeyListColumns, countActiveKeys, selectApiKeysOf, withUserLocked } from '@/db/queries/api-keys';
import { apiKeys } from '@/db/schema';
import { AppError } from '@/server/errors';
import { MAX_ACTIVE_KEYS, NAME_MAX_LENGTH } from './constants';
import { forgetVerifiedKey } from './verify';
import { generateApiKey, hashApiKey, hintOf } from './format';


export type ApiKeyStatus = 'active' | 'expired' | 'revoked';

export interface ApiKeySummary {
  id: string;
  name: string;
  hint: string;
  createdAt: Date;
  lastUsedAt: Date | null;
  expiresAt: Date | null;
  revokedAt: Date | null;
  status: ApiKeyStatus;
}

export function statusOf(key: { expiresAt: Date | null; revokedAt: Date | null }, now: Date): ApiKeyStatus {
  if (key.revokedAt) return 'revoked';
  // Compared as full timestamps: a key expiring at 10:00:00.000 is refused from that instant.
  if (key.expiresAt && key.expiresAt.getTime() <= now.getTime()) return 'expired';
  return 'active';
}

export async function listApiKeys(db: Database, userId: string, now = new Date()): Promise<ApiKeySummary[]> {
  const rows = await selectApiKeysOf(db, userId);
  return rows.map((row) => ({ ...row, status: statusOf(row, now) }));
}

/**
 * Creates a key and returns it in full: the only moment the plain key exists. Only its
 * SHA-256 hash and a hint are stored.
 */
export async function createApiKey(
  db: Database,
  userId: string,
  input: { name: string; expiresInDays: number | null },
  now = new Date(),
): Promise<{ key: string; apiKey: ApiKeySummary }> {
  const name = input.name.trim();
  if (name.length < 1 || name.length > NAME_MAX_LENGTH) {
    throw new AppError('invalid_request', `name must be 1 to ${NAME_MAX_LENGTH} characters`, [
      { param: 'name', message: `Must be 1 to ${NAME_MAX_LENGTH} characters.` },
    ]);
  }
  const key = generateApiKey();
  const expiresAt = input.expiresInDays === null ? null : new Date(now.getTime() + input.expiresInDays * 86_400_000);
  const row = await withUserLocked(db, userId, async (tx) => {
    if ((await countActiveKeys(tx, userId, now)) >= MAX_ACTIVE_KEYS) {
      throw new AppError(
        'conflict',
        `You already have ${MAX_ACTIVE_KEYS} active API keys, the most allowed. Revoke one you no longer use first.`,
      );
    }
    const [inserted] = await tx
      .insert(apiKeys)
      .values({ userId, name, keyHash: hashApiKey(key), hint: hintOf(key), createdAt: now, expiresAt })
      .returning(apiKeyListColumns);
    return inserted!;
  });
  return { key, apiKey: { ...row, status: statusOf(row, now) } };
}

/** Revokes one of the user's own keys (idempotent). Another user's key is "not found". */
export async function revokeApiKey(db: Database, userId: string, keyId: string, now = new Date()): Promise<ApiKeySummary> {
  await db
    .update(apiKeys)
    .set({ revokedAt: now })
    .where(and(eq(apiKeys.id, keyId), eq(apiKeys.userId, userId), isNull(apiKeys.revokedAt)));
  forgetVerifiedKey(keyId);
  const [row] = await db
    .select(apiKeyListColumns)
    .from(apiKeys)
    .where(and(eq(apiKeys.id, keyId), eq(apiKeys.userId, userId)));
  if (!row) throw new AppError('not_found', 'No such API key.');
  return { ...row, status: statusOf(row, now) };
}
