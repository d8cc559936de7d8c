import { and, desc, eq, gt, isNull, or, sql } from 'drizzle-orm';
import { runStatement, type Database, type Statement } from '../client';
import { apiKeys, users } from '../schema';

export const apiKeyListColumns = {
  id: apiKeys.id,
  name: apiKeys.name,
  hint: apiKeys.hint,
  createdAt: apiKeys.createdAt,
  lastUsedAt: apiKeys.lastUsedAt,
  expiresAt: apiKeys.expiresAt,
  revokedAt: apiKeys.revokedAt,
};

export function selectApiKeysOf(db: Database, userId: string) {
  return db
    .select(apiKeyListColumns)
    .from(apiKeys)
    .where(eq(apiKeys.userId, userId))
    .orderBy(desc(apiKeys.createdAt), desc(apiKeys.id));
}

/** Keys neither revoked nor expired at `now`. */
export function activeKeyCondition(now: Date) {
  return and(isNull(apiKeys.revokedAt), or(isNull(apiKeys.expiresAt), gt(apiKeys.expiresAt, now)));
}

/**
 * Runs `work` while holding a row lock on the user, so that concurrent creations of the
 * same user's keys are serialised (the active-key limit is checked inside).
 */
export async function withUserLocked<T>(db: Database, userId: string, work: (tx: Database) => Promise<T>) {
  return db.transaction(async (tx) => {
    await tx.select({ id: users.id }).from(users).where(eq(users.id, userId)).for('update');
    return work(tx as unknown as Database);
  });
}

export async function countActiveKeys(db: Database, userId: string, now: Date): Promise<number> {
  const [row] = await db
    .select({ n: sql<number>`count(*)::int` })
    .from(apiKeys)
    .where(and(eq(apiKeys.userId, userId), activeKeyCondition(now)));
  return Number(row?.n ?? 0);
}

/** The fields verification needs, found by hash. */
export function keyByHashStatement(keyHash: string) {
  return {
    name: 'api_key_by_hash',
    build: (db: Database) =>
      db
        .select({
          id: apiKeys.id,
          userId: apiKeys.userId,
          expiresAt: apiKeys.expiresAt,
          revokedAt: apiKeys.revokedAt,
          lastUsedAt: apiKeys.lastUsedAt,
        })
        .from(apiKeys)
        .where(eq(apiKeys.keyHash, sql.placeholder('keyHash')))
        .limit(1),
    values: { keyHash },
  } satisfies Statement<unknown>;
}

export async function selectKeyByHash(db: Database, keyHash: string) {
  const [row] = await runStatement(db, keyByHashStatement(keyHash));
  return row;
}
