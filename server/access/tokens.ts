import type { Database } from '@/db/client';
import {
  countActiveTokens,
  countActiveOrganizationKeys,
  insertToken,
  revokeTokenRow,
  rollTokenRow,
  selectTokenByHash,
  selectTokenById,
  selectTokensOf,
  touchTokenLastUsed,
  withOrganizationLocked,
  withUserLocked,
  type TokenListRow,
} from '@/db/queries/tokens';
import { MAX_ROLL_GRACE_HOURS, type Access } from '@/lib/key-restrictions';
import { MAX_ACTIVE_TOKENS, TOKEN_NAME_MAX_LENGTH, type TokenDetails, type TokenKind, type TokenSummary } from '@/lib/tokens';
import { afterResponse } from '@/server/after-response';
import { AppError } from '@/server/errors';
import { inTransaction, keyEvent, recordSecurityEvent } from '@/server/security-log/record';
import { announceRetiredSecrets, announceRevocation, mayUseTokenCache } from './revocations';
import { detailsOf, type Restrictions } from './token-details';
import { statusOf } from './token-status';
import { hashToken, TOKEN_FORMATS } from './token-format';

/**
 * The lifecycle of the secret tokens users create in Settings (API keys and calendar feed
 * tokens): created with a per-owner limit, shown once, stored as a SHA-256 hash, listed by
 * a hint, verified on every request, rolled (API keys), revoked. What differs between the
 * kinds is in POLICIES. Who may act on a token is decided by the callers
 * (./keys.ts for API keys and organisations, the routers for a user's own tokens).
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

export const nounOf = (kind: TokenKind) => POLICIES[kind].noun;

export { statusOf };

export const summaryOf = (row: TokenListRow, now: Date): TokenSummary => ({
  id: row.id,
  name: row.name,
  hint: row.hint,
  createdAt: row.createdAt,
  lastUsedAt: row.lastUsedAt,
  expiresAt: row.expiresAt,
  revokedAt: row.revokedAt,
  status: statusOf(row, now),
});

/** A user's own tokens of a kind, with their restrictions, newest first (not the organisations' keys). */
export async function listTokens(db: Database, kind: TokenKind, userId: string, now = new Date()): Promise<TokenDetails[]> {
  return detailsOf(db, await selectTokensOf(db, kind, userId), now);
}

export interface NewToken {
  name: string;
  expiresInDays?: number | null;
}

/** Who a new token belongs to: the person, or an organisation (API keys; created by `createdBy`). */
export type NewTokenOwner = { userId: string } | { organizationId: string; createdBy: string };

/**
 * Creates a token and returns it in full: the only moment the plain token exists. Only
 * its SHA-256 and a hint are stored. `restrictions` were checked by the caller
 * (./keys.ts); absent, the token reads everything its owner can see, with every permission.
 */
export async function createToken(
  db: Database,
  kind: TokenKind,
  owner: string | NewTokenOwner,
  input: NewToken,
  now = new Date(),
  restrictions?: Restrictions,
): Promise<{ secret: string; token: TokenDetails }> {
  const name = input.name.trim();
  if (name.length < 1 || name.length > TOKEN_NAME_MAX_LENGTH) {
    throw new AppError('invalid_request', `name must be 1 to ${TOKEN_NAME_MAX_LENGTH} characters`, [
      { param: 'name', message: `Must be 1 to ${TOKEN_NAME_MAX_LENGTH} characters.` },
    ]);
  }
  const who: NewTokenOwner = typeof owner === 'string' ? { userId: owner } : owner;
  const policy = POLICIES[kind];
  const format = TOKEN_FORMATS[kind];
  const secret = format.generate();
  const days = input.expiresInDays ?? null;
  const expiresAt = days === null ? null : new Date(now.getTime() + days * 86_400_000);
  const access: Access = restrictions?.access ?? { kind: 'all' };
  const values = {
    kind,
    userId: 'userId' in who ? who.userId : null,
    organizationId: 'organizationId' in who ? who.organizationId : null,
    createdBy: 'userId' in who ? who.userId : who.createdBy,
    name,
    tokenHash: hashToken(secret),
    hint: format.hint(secret),
    createdAt: now,
    expiresAt,
    accessAll: access.kind === 'all',
    accessPersonal: access.kind === 'chosen' && access.personal,
    accessOrganizationIds: access.kind === 'chosen' ? access.organizationIds : [],
    permissions: restrictions?.permissions ?? ['contracts:read', 'contracts:export'],
    allowedAddresses: restrictions?.allowedAddresses ?? [],
    ...(restrictions?.noticeReminderDays !== undefined ? { noticeReminderDays: restrictions.noticeReminderDays } : {}),
  };
  const limit = MAX_ACTIVE_TOKENS[kind];
  const full = () =>
    new AppError('conflict', `${'userId' in who ? 'You already have' : 'This organisation already has'} ${limit} active ${policy.nouns}, the most allowed. Revoke one no longer used first.`);
  // The token and its security-log event in one transaction: no key without its event.
  const insertWithEvent = async (tx: Database) => {
    const inserted = await insertToken(tx, values);
    const details = expiresAt ? { expires_at: expiresAt.toISOString() } : undefined;
    await recordSecurityEvent(tx, { ...keyEvent(`${kind}.created`, { ...inserted, ...values, id: inserted.id }, details), at: now });
    return inserted;
  };
  // Under a lock on the owner, so that concurrent creations cannot overshoot the limit.
  const row =
    'userId' in who
      ? await withUserLocked(db, who.userId, async (tx) => {
          if ((await countActiveTokens(tx, kind, who.userId, now)) >= limit) throw full();
          return insertWithEvent(tx);
        })
      : await withOrganizationLocked(db, who.organizationId, async (tx) => {
          if ((await countActiveOrganizationKeys(tx, who.organizationId, now)) >= limit) throw full();
          return insertWithEvent(tx);
        });
  const [token] = await detailsOf(db, [row], now);
  return { secret, token: token! };
}

/** Revokes a token (idempotent); the caller decided that the actor may. */
export async function revokeTokenById(db: Database, kind: TokenKind, id: string, now = new Date()): Promise<TokenSummary> {
  const row = await inTransaction(db, async (tx) => {
    const revoked = await revokeTokenRow(tx, kind, id, now);
    const current = await selectTokenById(tx, kind, id);
    // Once, by whoever revoked it first (a repeated revoke changes nothing and logs nothing).
    if (revoked && current) await recordSecurityEvent(tx, { ...keyEvent(`${kind}.revoked`, current), at: now });
    return current;
  });
  if (!row) throw new AppError('not_found', `No such ${POLICIES[kind].noun}.`);
  // At once in this process; within a second on every other instance (./revocations.ts).
  forgetVerifiedToken(id);
  if (POLICIES[kind].cacheTtlMs > 0) await announceRevocation(db, id);
  return summaryOf(row, now);
}

/** Revokes one of the user's own tokens (idempotent). Another user's token is "not found". */
export async function revokeToken(db: Database, kind: TokenKind, userId: string, id: string, now = new Date()): Promise<TokenSummary> {
  const row = await selectTokenById(db, kind, id);
  if (!row || row.userId !== userId) throw new AppError('not_found', `No such ${POLICIES[kind].noun}.`);
  return revokeTokenById(db, kind, id, now);
}

/**
 * Rolls an API key (the caller decided that the actor may): a new secret for the same
 * key (id, name, restrictions and rate-limit buckets stay), shown once. The previous
 * secret keeps working for `graceHours` (0..168), then gets 401 like a revoked key: its
 * cache entries carry that expiry, so every instance refuses it at that instant. A
 * secret that stops working now (grace 0, or the previous secret of an earlier roll) is
 * announced like a revocation, so other instances drop it within a second.
 */
export async function rollApiKey(db: Database, id: string, graceHours: number, now = new Date()): Promise<{ secret: string; token: TokenSummary }> {
  if (!Number.isInteger(graceHours) || graceHours < 0 || graceHours > MAX_ROLL_GRACE_HOURS) {
    throw new AppError('invalid_request', `graceHours must be a whole number of hours from 0 to ${MAX_ROLL_GRACE_HOURS}.`, [
      { param: 'graceHours', message: `A whole number of hours from 0 to ${MAX_ROLL_GRACE_HOURS}.` },
    ]);
  }
  const format = TOKEN_FORMATS.api_key;
  const secret = format.generate();
  const rolled = await inTransaction(db, async (tx) => {
    const result = await rollTokenRow(
      tx,
      id,
      { tokenHash: hashToken(secret), hint: format.hint(secret), previousExpiresAt: graceHours === 0 ? null : new Date(now.getTime() + graceHours * 3_600_000) },
      now,
    );
    const current = result ? await selectTokenById(tx, 'api_key', id) : undefined;
    if (current) await recordSecurityEvent(tx, { ...keyEvent('api_key.rolled', current, { grace_hours: graceHours }), at: now });
    return result;
  });
  if (!rolled) throw new AppError('conflict', 'Only an active key can be rolled: this one is revoked or expired. Create a new key instead.');
  if (rolled.retiredHashes.length > 0) {
    for (const hash of rolled.retiredHashes) forgetVerifiedSecret(hash);
    await announceRetiredSecrets(db, rolled.retiredHashes);
  }
  const row = await selectTokenById(db, 'api_key', id);
  return { secret, token: summaryOf(row!, now) };
}

// Verification ---------------------------------------------------------------------------

/** Who a valid token acts for. */
export interface TokenPrincipal {
  tokenId: string;
  /** The person who owns it; null for an organisation's key. */
  userId: string | null;
  /** The SHA-256 of the presented secret (a roll retires one secret of a key, not the key). */
  secretHash: string;
  /** Answered from this process's cache: a revocation made elsewhere is not in it yet (./revocations.ts). */
  cached: boolean;
}

interface CachedToken {
  tokenId: string;
  userId: string | null;
  /** The key's expiry, or for the previous secret of a rolled key the earlier of that and the end of its grace. */
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
    entry = { tokenId: row.id, userId: row.userId, expiresAt: secretExpiry(row), revokedAt: row.revokedAt, cachedUntil: now.getTime() + POLICIES[kind].cacheTtlMs };
    if (useCache) {
      if (state.byHash.size >= CACHE_MAX_ENTRIES) state.byHash.clear();
      state.byHash.set(hash, entry);
    }
    if (row.lastUsedAt && !state.lastUsedWrite.has(row.id)) state.lastUsedWrite.set(row.id, row.lastUsedAt.getTime());
  }
  if (statusOf(entry, now) !== 'active') return undefined;
  recordUse(db, entry.tokenId, now);
  return { tokenId: entry.tokenId, userId: entry.userId, secretHash: hash, cached };
}

/** When the presented secret stops working: the key's expiry, and for a previous secret the end of its grace. */
function secretExpiry(row: { expiresAt: Date | null; previous: boolean; previousExpiresAt: Date | null }): Date | null {
  if (!row.previous) return row.expiresAt;
  // A previous secret without a grace end cannot happen (the roll sets both); refuse it.
  const graceEnd = row.previousExpiresAt ?? new Date(0);
  return row.expiresAt && row.expiresAt < graceEnd ? row.expiresAt : graceEnd;
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

/** Drops one secret from this process's cache (a roll retired it). */
export function forgetVerifiedSecret(secretHash: string): void {
  state.byHash.delete(secretHash);
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
