import { and, desc, eq, gt, isNull, lte, or, sql } from 'drizzle-orm';
import type { TokenKind, TokenSummary } from '@/lib/tokens';
import { runStatement, type Database, type Statement } from '../client';
import { accessTokens, users } from '../schema';

/** What the settings pages list: never the token hash. */
export const tokenListColumns = {
  id: accessTokens.id,
  name: accessTokens.name,
  hint: accessTokens.hint,
  createdAt: accessTokens.createdAt,
  lastUsedAt: accessTokens.lastUsedAt,
  expiresAt: accessTokens.expiresAt,
  revokedAt: accessTokens.revokedAt,
};

export type TokenListRow = Omit<TokenSummary, 'status'>;

const ofUser = (kind: TokenKind, userId: string) => and(eq(accessTokens.userId, userId), eq(accessTokens.kind, kind));

/** A user's tokens of one kind, newest first. */
export function selectTokensOf(db: Database, kind: TokenKind, userId: string): Promise<TokenListRow[]> {
  return db
    .select(tokenListColumns)
    .from(accessTokens)
    .where(ofUser(kind, userId))
    .orderBy(desc(accessTokens.createdAt), desc(accessTokens.id));
}

/** One of a user's tokens; another user's token, or one of another kind, is not found. */
export async function selectTokenOf(db: Database, kind: TokenKind, userId: string, id: string): Promise<TokenListRow | undefined> {
  const [row] = await db
    .select(tokenListColumns)
    .from(accessTokens)
    .where(and(eq(accessTokens.id, id), ofUser(kind, userId)));
  return row;
}

/** Who owns a token (the command line revokes by id alone). */
export async function selectTokenOwner(db: Database, kind: TokenKind, id: string): Promise<string | undefined> {
  const [row] = await db
    .select({ userId: accessTokens.userId })
    .from(accessTokens)
    .where(and(eq(accessTokens.id, id), eq(accessTokens.kind, kind)));
  return row?.userId;
}

/**
 * Tokens of a kind neither revoked nor expired at `now`: in SQL, the rule `statusOf`
 * (server/access/tokens.ts) decides in TypeScript; tests/access/token-status.test.ts holds
 * the two together.
 */
export async function countActiveTokens(db: Database, kind: TokenKind, userId: string, now: Date): Promise<number> {
  const [row] = await db
    .select({ n: sql<number>`count(*)::int` })
    .from(accessTokens)
    .where(
      and(ofUser(kind, userId), isNull(accessTokens.revokedAt), or(isNull(accessTokens.expiresAt), gt(accessTokens.expiresAt, now))),
    );
  return Number(row?.n ?? 0);
}

/**
 * Runs `work` while holding a row lock on the user, so that concurrent creations of the
 * same user's tokens are serialised (the limit of active tokens is checked inside).
 */
export async function withUserLocked<T>(db: Database, userId: string, work: (tx: Database) => Promise<T>): Promise<T> {
  return db.transaction(async (tx) => {
    await tx.select({ id: users.id }).from(users).where(eq(users.id, userId)).for('update');
    return work(tx as unknown as Database);
  });
}

export async function insertToken(
  db: Database,
  values: { kind: TokenKind; userId: string; name: string; tokenHash: string; hint: string; createdAt: Date; expiresAt: Date | null },
): Promise<TokenListRow> {
  const [row] = await db.insert(accessTokens).values(values).returning(tokenListColumns);
  return row!;
}

/**
 * Revokes one of a user's tokens; a token already revoked keeps its first revocation time.
 * Returns the token's name when this call revoked it, undefined when it changed nothing.
 */
export async function revokeTokenRow(db: Database, kind: TokenKind, userId: string, id: string, now: Date): Promise<{ name: string } | undefined> {
  const [row] = await db
    .update(accessTokens)
    .set({ revokedAt: now })
    .where(and(eq(accessTokens.id, id), ofUser(kind, userId), isNull(accessTokens.revokedAt)))
    .returning({ name: accessTokens.name });
  return row;
}

/**
 * Tells every process listening on `channel` that a token was revoked (Postgres NOTIFY,
 * delivered at commit; PGlite delivers it in process). The listeners drop their key cache.
 */
export async function notifyTokenRevoked(db: Database, channel: string): Promise<void> {
  await db.execute(sql`select pg_notify(${channel}, '')`);
}

export interface TokenVerificationRow {
  id: string;
  userId: string;
  expiresAt: Date | null;
  revokedAt: Date | null;
  lastUsedAt: Date | null;
}

/** What verifying a presented token needs, found by its hash (the unique index) and kind. */
export function tokenByHashStatement(kind: TokenKind, tokenHash: string): Statement<TokenVerificationRow[]> {
  return {
    name: 'access-tokens.by-hash',
    build: (db: Database) =>
      db
        .select({
          id: accessTokens.id,
          userId: accessTokens.userId,
          expiresAt: accessTokens.expiresAt,
          revokedAt: accessTokens.revokedAt,
          lastUsedAt: accessTokens.lastUsedAt,
        })
        .from(accessTokens)
        .where(and(eq(accessTokens.tokenHash, sql.placeholder('tokenHash')), eq(accessTokens.kind, sql.placeholder('kind'))))
        .limit(1),
    values: { tokenHash, kind },
  };
}

export async function selectTokenByHash(db: Database, kind: TokenKind, tokenHash: string): Promise<TokenVerificationRow | undefined> {
  const [row] = await runStatement(db, tokenByHashStatement(kind, tokenHash));
  return row;
}

/**
 * Sets last_used_at to `now` unless it was set less than `minIntervalMs` before: the
 * condition is in the statement, so concurrent requests on several instances write at
 * most once per interval between them.
 */
export async function touchTokenLastUsed(db: Database, id: string, now: Date, minIntervalMs: number): Promise<void> {
  await db
    .update(accessTokens)
    .set({ lastUsedAt: now })
    .where(
      and(eq(accessTokens.id, id), or(isNull(accessTokens.lastUsedAt), lte(accessTokens.lastUsedAt, new Date(now.getTime() - minIntervalMs)))),
    );
}
