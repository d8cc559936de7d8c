import { processRateLimitStore } from '@/server/rate-limit';
import { describeError } from '@/server/rate-limit/failure-log';

/**
 * Revocations that every instance sees within a second. Verified tokens are cached in
 * each process for up to 30 s (server/access/tokens.ts), so a revocation made on one
 * instance would otherwise reach the others only when their cache entries expire.
 *
 * A revocation writes a short-lived marker into the store the rate limits already use
 * (Redis or Upstash). A request served from the cache asks for its token's marker at the
 * same moment as its rate-limit call: both commands travel in one round trip (ioredis and
 * @upstash/redis pipeline the commands of one tick), so the check adds no database call
 * and no extra Redis round trip. The marker outlives every cache entry (MARKER_MS), after
 * which the database itself says "revoked".
 *
 * With the in-process store (the embedded single-instance default) the process is the
 * only instance: it drops its own cache entry at once, and no marker is needed.
 * When the store is down, requests fail open as for rate limits: the marker cannot be
 * read, and a revocation reaches the other instances within the cache's 30 s.
 */

const MARKER_MS = 120_000;
const markerKey = (tokenId: string) => `cda:revoked:${tokenId}`;

/** Tells every instance that a token is revoked. Never throws: a failure is logged, and the cache expiry still bounds it. */
export async function announceRevocation(tokenId: string): Promise<void> {
  const store = processRateLimitStore();
  if (store.kind === 'memory') return;
  try {
    await store.markers.set(markerKey(tokenId), MARKER_MS);
  } catch (error) {
    console.warn(`[access] could not announce the revocation of token ${tokenId} to other instances (${describeError(error)}); they refuse it within 30 s`);
  }
}

/** Whether another instance revoked this token recently. False when the store cannot answer (fail open, as rate limits). */
export async function wasRevokedElsewhere(tokenId: string): Promise<boolean> {
  const store = processRateLimitStore();
  if (store.kind === 'memory') return false;
  try {
    return await store.markers.has(markerKey(tokenId));
  } catch {
    return false;
  }
}
