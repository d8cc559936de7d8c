import { and, desc, eq, gt, isNull, lte, or, sql } from 'drizzle-orm';
import type { TokenKind } from '@/lib/tokens';
import { runStatement, type Database, type Statement } from '../client';
import { accessTokens, organizations, tokenOrganizationRemovals, users } from '../schema';
import { memberObjectReachesOrganization } from './access';

/** What the settings pages list: never the token hash. */
export const tokenListColumns = {
  id: accessTokens.id,
  name: accessTokens.name,
  hint: accessTokens.hint,
  createdAt: accessTokens.createdAt,
  lastUsedAt: accessTokens.lastUsedAt,
  expiresAt: accessTokens.expiresAt,
  revokedAt: accessTokens.revokedAt,
  userId: accessTokens.userId,
  organizationId: accessTokens.organizationId,
  createdBy: accessTokens.createdBy,
  accessAll: accessTokens.accessAll,
  accessPersonal: accessTokens.accessPersonal,
  accessOrganizationIds: accessTokens.accessOrganizationIds,
  permissions: accessTokens.permissions,
  allowedAddresses: accessTokens.allowedAddresses,
  previousExpiresAt: accessTokens.previousExpiresAt,
  noticeReminderDays: accessTokens.noticeReminderDays,
};

export interface TokenListRow {
  id: string;
  name: string;
  hint: string;
  createdAt: Date;
  lastUsedAt: Date | null;
  expiresAt: Date | null;
  revokedAt: Date | null;
  userId: string | null;
  organizationId: string | null;
  createdBy: string | null;
  accessAll: boolean;
  accessPersonal: boolean;
  accessOrganizationIds: string[];
  permissions: string[];
  allowedAddresses: string[];
  previousExpiresAt: Date | null;
  noticeReminderDays: number | null;
}

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

/** One token by id whoever owns it (the caller decides who may act on it). */
export async function selectTokenById(db: Database, kind: TokenKind, id: string): Promise<TokenListRow | undefined> {
  const [row] = await db
    .select(tokenListColumns)
    .from(accessTokens)
    .where(and(eq(accessTokens.id, id), eq(accessTokens.kind, kind)));
  return row;
}

/** An organisation's own API keys, newest first. */
export function selectOrganizationKeys(db: Database, organizationId: string): Promise<TokenListRow[]> {
  return db
    .select(tokenListColumns)
    .from(accessTokens)
    .where(and(eq(accessTokens.organizationId, organizationId), eq(accessTokens.kind, 'api_key')))
    .orderBy(desc(accessTokens.createdAt), desc(accessTokens.id));
}

/**
 * Members' personal API keys that can read an organisation's contracts at `now`: active,
 * and reaching it by the rule of db/queries/access.ts (a member's, the policy on, access to
 * everything or to this organisation, not removed by it). Through the memberships of the
 * organisation and each member's keys (access_tokens_user_idx).
 */
export function selectMemberKeysReaching(db: Database, organizationId: string, now: Date): Promise<(TokenListRow & { ownerEmail: string; ownerName: string | null })[]> {
  return db
    .select({ ...tokenListColumns, ownerEmail: users.email, ownerName: users.name })
    .from(accessTokens)
    .innerJoin(users, eq(users.id, accessTokens.userId))
    .where(
      and(
        eq(accessTokens.kind, 'api_key'),
        sql`${accessTokens.userId} IN (SELECT user_id FROM memberships WHERE organization_id = ${organizationId})`,
        isNull(accessTokens.revokedAt),
        or(isNull(accessTokens.expiresAt), gt(accessTokens.expiresAt, now)),
        memberObjectReachesOrganization(
          { userId: sql`${accessTokens.userId}`, accessAll: sql`${accessTokens.accessAll}`, accessOrganizationIds: sql`${accessTokens.accessOrganizationIds}`, tokenId: sql`${accessTokens.id}` },
          sql`${organizationId}::uuid`,
        ),
      ),
    )
    .orderBy(desc(accessTokens.createdAt), desc(accessTokens.id));
}

/** The organisations that removed a token's access, with who did and when (the owner's "why"). */
export function selectRemovalsOf(db: Database, tokenIds: readonly string[]) {
  if (tokenIds.length === 0) return Promise.resolve([]);
  return db
    .select({
      tokenId: tokenOrganizationRemovals.tokenId,
      organizationId: tokenOrganizationRemovals.organizationId,
      organizationName: organizations.name,
      removedAt: tokenOrganizationRemovals.removedAt,
      removedByEmail: users.email,
    })
    .from(tokenOrganizationRemovals)
    .innerJoin(organizations, eq(organizations.id, tokenOrganizationRemovals.organizationId))
    .leftJoin(users, eq(users.id, tokenOrganizationRemovals.removedBy))
    .where(sql`${tokenOrganizationRemovals.tokenId} IN (${sql.join(tokenIds.map((id) => sql`${id}::uuid`), sql`, `)})`);
}

export async function insertRemoval(db: Database, values: { tokenId: string; organizationId: string; removedBy: string; removedAt: Date }): Promise<void> {
  await db.insert(tokenOrganizationRemovals).values(values).onConflictDoNothing();
}

/** Sets a token's restrictions (access, permissions, allowed addresses). */
export async function updateTokenRestrictions(
  db: Database,
  id: string,
  values: { accessAll: boolean; accessPersonal: boolean; accessOrganizationIds: string[]; permissions?: string[]; allowedAddresses?: string[] },
): Promise<void> {
  await db.update(accessTokens).set(values).where(eq(accessTokens.id, id));
}

/**
 * Rolls a key: the new secret's hash becomes current, the current one becomes the
 * previous secret until `previousExpiresAt` (null: no previous secret). Only an active key
 * rolls (the condition is in the statement). Returns the hash of the previous secret the
 * roll replaced, if it had one (it stops working now), or undefined when the key was not
 * active.
 */
export async function rollTokenRow(
  db: Database,
  id: string,
  values: { tokenHash: string; hint: string; previousExpiresAt: Date | null },
  now: Date,
): Promise<{ retiredHashes: string[] } | undefined> {
  return db.transaction(async (tx) => {
    const [current] = await tx
      .select({ tokenHash: accessTokens.tokenHash, previousTokenHash: accessTokens.previousTokenHash, previousExpiresAt: accessTokens.previousExpiresAt })
      .from(accessTokens)
      .where(and(eq(accessTokens.id, id), isNull(accessTokens.revokedAt), or(isNull(accessTokens.expiresAt), gt(accessTokens.expiresAt, now))))
      .for('update');
    if (!current) return undefined;
    const retiredHashes: string[] = [];
    if (current.previousTokenHash && current.previousExpiresAt && current.previousExpiresAt > now) retiredHashes.push(current.previousTokenHash);
    if (values.previousExpiresAt === null) retiredHashes.push(current.tokenHash);
    await tx
      .update(accessTokens)
      .set({
        tokenHash: values.tokenHash,
        hint: values.hint,
        previousTokenHash: values.previousExpiresAt === null ? null : current.tokenHash,
        previousExpiresAt: values.previousExpiresAt,
      })
      .where(eq(accessTokens.id, id));
    return { retiredHashes };
  });
}

/** An organisation's policy: whether members' personal keys may read its contracts. */
export async function selectMemberKeysAllowed(db: Database, organizationId: string): Promise<boolean | undefined> {
  const [row] = await db.select({ allowed: organizations.memberKeysAllowed }).from(organizations).where(eq(organizations.id, organizationId));
  return row?.allowed;
}

export async function updateMemberKeysAllowed(db: Database, organizationId: string, allowed: boolean): Promise<void> {
  await db.update(organizations).set({ memberKeysAllowed: allowed }).where(eq(organizations.id, organizationId));
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

/** The same with a lock on an organisation (its own keys' limit). */
export async function withOrganizationLocked<T>(db: Database, organizationId: string, work: (tx: Database) => Promise<T>): Promise<T> {
  return db.transaction(async (tx) => {
    await tx.select({ id: organizations.id }).from(organizations).where(eq(organizations.id, organizationId)).for('update');
    return work(tx as unknown as Database);
  });
}

/** An organisation's own active API keys (the same rule as countActiveTokens). */
export async function countActiveOrganizationKeys(db: Database, organizationId: string, now: Date): Promise<number> {
  const [row] = await db
    .select({ n: sql<number>`count(*)::int` })
    .from(accessTokens)
    .where(
      and(
        eq(accessTokens.organizationId, organizationId),
        isNull(accessTokens.revokedAt),
        or(isNull(accessTokens.expiresAt), gt(accessTokens.expiresAt, now)),
      ),
    );
  return Number(row?.n ?? 0);
}

export interface NewTokenValues {
  kind: TokenKind;
  userId: string | null;
  organizationId: string | null;
  createdBy: string;
  name: string;
  tokenHash: string;
  hint: string;
  createdAt: Date;
  expiresAt: Date | null;
  accessAll: boolean;
  accessPersonal: boolean;
  accessOrganizationIds: string[];
  permissions: string[];
  allowedAddresses: string[];
  /** Calendar feeds: days before a notice deadline its reminder shows. */
  noticeReminderDays?: number;
}

export async function insertToken(db: Database, values: NewTokenValues): Promise<TokenListRow> {
  const [row] = await db.insert(accessTokens).values(values).returning(tokenListColumns);
  return row!;
}

/**
 * Revokes a token (the caller checked who may); a token already revoked keeps its first
 * revocation time. Returns the token's name when this call revoked it, undefined when it
 * changed nothing.
 */
export async function revokeTokenRow(db: Database, kind: TokenKind, id: string, now: Date): Promise<{ name: string } | undefined> {
  const [row] = await db
    .update(accessTokens)
    .set({ revokedAt: now })
    .where(and(eq(accessTokens.id, id), eq(accessTokens.kind, kind), isNull(accessTokens.revokedAt)))
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
  userId: string | null;
  expiresAt: Date | null;
  revokedAt: Date | null;
  lastUsedAt: Date | null;
  /** The presented secret is the previous one of a rolled key, working until previousExpiresAt. */
  previous: boolean;
  previousExpiresAt: Date | null;
}

/**
 * What verifying a presented token needs, found by its hash and kind: the current secret
 * or, after a roll, the previous one (each has a unique index; Postgres ORs the two).
 */
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
          previous: sql<boolean>`(${accessTokens.tokenHash} <> ${sql.placeholder('tokenHash')})`,
          previousExpiresAt: accessTokens.previousExpiresAt,
        })
        .from(accessTokens)
        .where(
          and(
            or(eq(accessTokens.tokenHash, sql.placeholder('tokenHash')), eq(accessTokens.previousTokenHash, sql.placeholder('tokenHash'))),
            eq(accessTokens.kind, sql.placeholder('kind')),
          ),
        )
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

/** A calendar feed's reminder before a notice deadline, in days (null: the default). */
export async function feedNoticeReminderDays(db: Database, tokenId: string): Promise<number | null> {
  const [row] = await db.select({ days: accessTokens.noticeReminderDays }).from(accessTokens).where(eq(accessTokens.id, tokenId));
  return row?.days ?? null;
}
