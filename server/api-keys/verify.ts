import { eq } from 'drizzle-orm';
import { afterResponse } from '@/server/after-response';
import type { Database } from '@/db/client';
import { selectKeyByHash } from '@/db/queries/api-keys';
import { apiKeys } from '@/db/schema';
import { hashApiKey, isWellFormedApiKey } from './format';

/** Who a valid key acts for. */
export interface ApiKeyPrincipal {
  keyId: string;
  userId: string;
}

interface CachedKey {
  keyId: string;
  userId: string;
  expiresAt: Date | null;
  revokedAt: Date | null;
  cachedUntil: number;
}

// Lookups are cached briefly so that a busy integration does not cost a key query per
// request. Expiry is still checked on every request; a revocation made by this process
// drops the entry at once; one made elsewhere is seen within CACHE_TTL_MS.
const CACHE_TTL_MS = 30_000;
const CACHE_MAX_ENTRIES = 10_000;
const LAST_USED_INTERVAL_MS = 60_000;

const STATE = Symbol.for('contract-data-api.api-key-cache');
type State = { byHash: Map<string, CachedKey>; lastUsedWrite: Map<string, number> };
const g = globalThis as typeof globalThis & { [STATE]?: State };
const state: State = (g[STATE] ??= { byHash: new Map(), lastUsedWrite: new Map() });

/**
 * The single verification path of the REST API: format and checksum (no database for a
 * mistyped key), hash, look up, then refuse expired or revoked keys. Every refusal is the
 * same `undefined`, so callers answer every bad key with the same 401.
 */
export async function verifyApiKey(
  db: Database,
  presented: string | null | undefined,
  now = new Date(),
): Promise<ApiKeyPrincipal | undefined> {
  if (!presented || !isWellFormedApiKey(presented)) return undefined;
  const hash = hashApiKey(presented);
  let entry = state.byHash.get(hash);
  if (!entry || entry.cachedUntil <= now.getTime()) {
    const row = await selectKeyByHash(db, hash);
    if (!row) {
      state.byHash.delete(hash);
      return undefined;
    }
    entry = { keyId: row.id, userId: row.userId, expiresAt: row.expiresAt, revokedAt: row.revokedAt, cachedUntil: now.getTime() + CACHE_TTL_MS };
    if (state.byHash.size >= CACHE_MAX_ENTRIES) state.byHash.clear();
    state.byHash.set(hash, entry);
    if (row.lastUsedAt && !state.lastUsedWrite.has(row.id)) state.lastUsedWrite.set(row.id, row.lastUsedAt.getTime());
  }
  if (entry.revokedAt) return undefined;
  if (entry.expiresAt && entry.expiresAt.getTime() <= now.getTime()) return undefined;
  recordUse(db, entry.keyId, now);
  return { keyId: entry.keyId, userId: entry.userId };
}

/**
 * Writes last_used_at at most once a minute per key, without making the request wait:
 * inside a Next.js request the write runs after the response has been sent, through
 * after() (which also keeps a serverless function alive until it is done). Outside one
 * (tests, scripts) after() throws, and the write simply runs in the background.
 */
function recordUse(db: Database, keyId: string, now: Date): void {
  const last = state.lastUsedWrite.get(keyId) ?? 0;
  if (now.getTime() - last < LAST_USED_INTERVAL_MS) return;
  state.lastUsedWrite.set(keyId, now.getTime());
  // One line per failed write, so at most one a minute per key.
  afterResponse(
    () => db.update(apiKeys).set({ lastUsedAt: now }).where(eq(apiKeys.id, keyId)),
    (reason) => `api-keys: could not record last use of key ${keyId} (${reason})`,
  );
}

/** Drops a key from this process's cache (called on revocation). */
export function forgetVerifiedKey(keyId: string): void {
  for (const [hash, entry] of state.byHash) if (entry.keyId === keyId) state.byHash.delete(hash);
}

/** Empties the cache (tests). */
export function clearVerifiedKeyCache(): void {
  state.byHash.clear();
  state.lastUsedWrite.clear();
}
