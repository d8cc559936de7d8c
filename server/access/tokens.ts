import type { Database } from '@/db/client';
import {
  countActiveTokens,
  insertToken,
  revokeTokenRow,
  selectTokenByHash,
  selectTokenOf,
  selectTokensOf,
  touchTokenLastUsed,
  withUserLocked,
  type TokenListRow,
} from '@/db/queries/tokens';
import { MAX_ACTIVE_TOKENS, TOKEN_NAME_MAX_LENGTH, type TokenKind, type TokenStatus, type TokenSummary } from '@/lib/tokens';
import { afterResponse } from '@/server/after-response';
import { AppError } from '@/server/errors';
import { recordSecurityEvent } from '@/server/security-log/record';
import { announceRevocation, mayUseTokenCache } from './revocations';
import { hashToken, TOKEN_FORMATS } from './token-format';

/**
 * The lifecycle of the secret tokens users create in Settings (API keys and calendar feed
 * tokens): created with a per-user limit, shown once, stored as a SHA-256 hash, listed by a
 * hint, verified on every request, revoked. What differs between the kinds is in POLICIES.
 */
interface KindPolicy {
  /** Singular and plural nouns, for messages. */
  noun: string;
  nouns: string;
  /**
   * How long a verified token is remembered in this process. API keys are presented on
   * every request of an integration; a calendar feed is fetched every few hours and is not
   * worth a cache. A revocation made by this process drops the entry at once; one made
   * elsewhere is seen within this time.
   */
  cacheTtlMs: number;
}

const POLICIES: Record<TokenKind, KindPolicy> = {
  api_key: { noun: 'API key', nouns: 'API keys', cacheTtlMs: 30_000 },
  calendar_feed: { noun: 'calendar feed', nouns: 'calendar feeds', cacheTtlMs: 0 },
};

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

const summaryOf = (row: TokenListRow, now: Date): TokenSummary => ({ ...row, status: statusOf(row, now) });

export async function listTokens(db: Database, kind: TokenKind, userId: string, now = new Date()): Promise<TokenSummary[]> {
  return (await selectTokensOf(db, kind, userId)).map((row) => summaryOf(row, now));
}

/**
 * Creates a token and returns it in full: the only moment the plain token exists. Only
 * its SHA-256 and a hint are stored.
 */
export async function createToken(
  db: Database,
  kind: TokenKind,
  userId: string,
  input: { name: string; expiresInDays?: number | null },
  now = new Date(),
): Promise<{ secret: string; token: TokenSummary }> {
  const name = input.name.trim();
  if (name.length < 1 || name.length > TOKEN_NAME_MAX_LENGTH) {
    throw new AppError('invalid_request', `name must be 1 to ${TOKEN_NAME_MAX_LENGTH} characters`, [
      { param: 'name', message: `Must be 1 to ${TOKEN_NAME_MAX_LENGTH} characters.` },
    ]);
  }
  const policy = POLICIES[kind];
  const format = TOKEN_FORMATS[kind];
  const secret = format.generate();
  const days = input.expiresInDays ?? null;
  const expiresAt = days === null ? null : new Date(now.getTime() + days * 86_400_000);
  // Under a lock on the user, so that concurrent creations cannot overshoot the limit.
  const row = await withUserLocked(db, userId, async (tx) => {
    if ((await countActiveTokens(tx, kind, userId, now)) >= MAX_ACTIVE_TOKENS[kind]) {
      throw new AppError(
        'conflict',
        `You already have ${MAX_ACTIVE_TOKENS[kind]} active ${policy.nouns}, the most allowed. Revoke one you no longer use first.`,
      );
    }
    const inserted = await insertToken(tx, { kind, userId, name, tokenHash: hashToken(secret), hint: format.hint(secret), createdAt: now, expiresAt });
    // In the same transaction: no key without its event.
    await recordSecurityEvent(tx, {
      kind: `${kind}.created`,
      subjectUserId: userId,
      objectType: kind,
      objectId: inserted.id,
      objectLabel: name,
      details: expiresAt ? { expires_at: expiresAt.toISOString() } : undefined,
      at: now,
    });
    return inserted;
  });
  return { secret, token: summaryOf(row, now) };
}

/** Revokes one of the user's own tokens (idempotent). Another user's token is "not found". */
export async function revokeToken(db: Database, kind: TokenKind, userId: string, id: string, now = new Date()): Promise<TokenSummary> {
  await db.transaction(async (tx) => {
    const revoked = await revokeTokenRow(tx as unknown as Database, kind, userId, id, now);
    // Once, by whoever revoked it first (a repeated revoke changes nothing and logs nothing).
    if (revoked) {
      await recordSecurityEvent(tx as unknown as Database, { kind: `${kind}.revoked`, subjectUserId: userId, objectType: kind, objectId: id, objectLabel: revoked.name, at: now });
    }
  });
  const row = await selectTokenOf(db, kind, userId, id);
  if (!row) throw new AppError('not_found', `No such ${POLICIES[kind].noun}.`);
  // At once in this process; within a second on every other instance (./revocations.ts).
  forgetVerifiedToken(id);
  if (POLICIES[kind].cacheTtlMs > 0) await announceRevocation(db, id);
  return summaryOf(row, now);
}

// Verification ---------------------------------------------------------------------------

/** Who a valid token acts for. */
export interface TokenPrincipal {
  tokenId: string;
  userId: string;
  /** Answered from this process's cache: a revocation made elsewhere is not in it yet (./revocations.ts). */
  cached: boolean;
}

interface CachedToken {
  tokenId: string;
  userId: string;
  expiresAt: Date | null;
  revokedAt: Date | null;
  cachedUntil: number;
}

const CACHE_MAX_ENTRIES = 10_000;
const LAST_USED_INTERVAL_MS = 60_000;

// One cache per process, whichever bundle layer of Next.js loads this module.
const STATE = Symbol.for('contract-data-api.token-cache');
type State = { byHash: Map<string, CachedToken>; lastUsedWrite: Map<string, number> };
const g = globalThis as typeof globalThis & { [STATE]?: State };
const state: State = (g[STATE] ??= { byHash: new Map(), lastUsedWrite: new Map() });

export interface VerifyOptions {
  /**
   * Asked before the database is: resolving false refuses the token without a lookup
   * (authenticate.ts passes "this client address is not out of failed attempts", so that a
   * blocked address costs no database work). Not asked for a token answered from the cache
   * or refused by its format.
   */
  mayLookUp?: () => Promise<boolean>;
}

/**
 * The one verification path of every token: format and checksum (no database for a
 * mistyped or wrong-kind token), hash, look up, then refuse expired or revoked tokens.
 * Every refusal is the same `undefined`, so callers answer every bad token alike.
 */
export async function verifyToken(
  db: Database,
  kind: TokenKind,
  presented: string | null | undefined,
  now = new Date(),
  options: VerifyOptions = {},
): Promise<TokenPrincipal | undefined> {
  if (!presented || !TOKEN_FORMATS[kind].isWellFormed(presented)) return undefined;
  const hash = hashToken(presented);
  // Not while this process cannot hear of revocations made by others yet (./revocations.ts).
  const useCache = POLICIES[kind].cacheTtlMs > 0 && mayUseTokenCache(db, clearApiKeyCache);
  let entry = useCache ? state.byHash.get(hash) : undefined;
  const cached = entry !== undefined && entry.cachedUntil > now.getTime();
  if (!entry || !cached) {
    if (options.mayLookUp && !(await options.mayLookUp())) return undefined;
    const row = await selectTokenByHash(db, kind, hash);
    if (!row) {
      state.byHash.delete(hash);
      return undefined;
    }
    entry = { tokenId: row.id, userId: row.userId, expiresAt: row.expiresAt, revokedAt: row.revokedAt, cachedUntil: now.getTime() + POLICIES[kind].cacheTtlMs };
    if (useCache) {
      if (state.byHash.size >= CACHE_MAX_ENTRIES) state.byHash.clear();
      state.byHash.set(hash, entry);
    }
    if (row.lastUsedAt && !state.lastUsedWrite.has(row.id)) state.lastUsedWrite.set(row.id, row.lastUsedAt.getTime());
  }
  if (statusOf(entry, now) !== 'active') return undefined;
  recordUse(db, entry.tokenId, now);
  return { tokenId: entry.tokenId, userId: entry.userId, cached };
}

/**
 * Writes last_used_at at most once a minute per token, without making the request wait:
 * this process skips writes within the minute, and the statement's own condition keeps
 * several instances from writing more often between them.
 */
function recordUse(db: Database, tokenId: string, now: Date): void {
  const last = state.lastUsedWrite.get(tokenId) ?? 0;
  if (now.getTime() - last < LAST_USED_INTERVAL_MS) return;
  if (state.lastUsedWrite.size >= CACHE_MAX_ENTRIES) state.lastUsedWrite.clear();
  state.lastUsedWrite.set(tokenId, now.getTime());
  // One line per failed write, so at most one a minute per token.
  afterResponse(
    () => touchTokenLastUsed(db, tokenId, now, LAST_USED_INTERVAL_MS),
    { msg: 'could not record the last use of a token', fields: { token_id: tokenId } },
  );
}

/** Drops a token from this process's cache (on revocation). */
export function forgetVerifiedToken(tokenId: string): void {
  for (const [hash, entry] of state.byHash) if (entry.tokenId === tokenId) state.byHash.delete(hash);
}

/** A token was revoked by another process: every cached key is looked up again once. */
function clearApiKeyCache(): void {
  state.byHash.clear();
}

/** Empties the cache (tests). */
export function clearVerifiedTokenCache(): void {
  state.byHash.clear();
  state.lastUsedWrite.clear();
}
