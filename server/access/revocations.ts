import { postgresHandleOf, type Database } from '@/db/client';
import { notifyTokenRevoked } from '@/db/queries/tokens';
import { processRateLimitStore } from '@/server/rate-limit';
import { logger } from '@/server/observability/logger';
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
 *
 * Another process is not always another instance with the same store: `npm run apikey --
 * revoke` run next to a server that counts in memory (Postgres, no Redis) wrote no marker
 * the server could read, and the key worked for up to 30 s more. So a revocation also
 * sends a Postgres NOTIFY, and every server process on Postgres listens (one connection
 * of its own) and empties its key cache when one arrives. Until its LISTEN is in place a
 * process does not answer keys from its cache; if LISTEN fails the process logs it once
 * and falls back to the markers and the cache's 30 s. Behind a transaction pooler the
 * LISTEN connection goes to the unpooled URL (DATABASE_URL_UNPOOLED, else
 * POSTGRES_URL_NON_POOLING; db/client.ts), past the pooler, and hears every NOTIFY: a
 * revocation reaches every instance at once without a shared store. Without an unpooled
 * URL, LISTEN through a transaction pooler does not fail but hears nothing (the pooler
 * accepts it and hands the session back to its pool): there the markers in the shared
 * store are what reach every instance (docs/reliability.md, tests/cluster/listen.test.ts).
 */

export const REVOCATION_CHANNEL = 'cda_token_revoked';

const MARKER_MS = 120_000;
const markerKey = (tokenId: string) => `cda:revoked:${tokenId}`;
// A roll retires one secret of a key, not the key: its marker names the secret by (a
// prefix of) its SHA-256, never the secret.
const retiredMarkerKey = (secretHash: string) => `cda:retired:${secretHash.slice(0, 32)}`;

/** Tells every instance and process that a token is revoked. Never throws: a failure is logged, and the cache expiry still bounds it. */
export async function announceRevocation(db: Database, tokenId: string): Promise<void> {
  const store = processRateLimitStore();
  await Promise.all([
    notifyTokenRevoked(db, REVOCATION_CHANNEL).catch((error: unknown) => {
      logger().warn({ token_id: tokenId, error: describeError(error) }, 'could not notify other processes of a revocation; they refuse the token within 30 s');
    }),
    store.kind === 'memory'
      ? undefined
      : store.markers.set(markerKey(tokenId), MARKER_MS).catch((error: unknown) => {
          logger().warn({ token_id: tokenId, error: describeError(error) }, 'could not announce a revocation to other instances; they refuse the token within 30 s');
        }),
  ]);
}

/**
 * Tells every instance that these secrets stopped working now (a roll without grace, or
 * the previous secret of an earlier roll): the same NOTIFY and markers as a revocation,
 * the markers naming the secrets instead of the key, whose new secret keeps working.
 */
export async function announceRetiredSecrets(db: Database, secretHashes: readonly string[]): Promise<void> {
  const store = processRateLimitStore();
  await Promise.all([
    notifyTokenRevoked(db, REVOCATION_CHANNEL).catch((error: unknown) => {
      logger().warn({ error: describeError(error) }, 'could not notify other processes of a rolled key; they refuse its old secret within 30 s');
    }),
    ...(store.kind === 'memory'
      ? []
      : secretHashes.map((hash) =>
          store.markers.set(retiredMarkerKey(hash), MARKER_MS).catch((error: unknown) => {
            logger().warn({ error: describeError(error) }, 'could not announce a rolled key to other instances; they refuse its old secret within 30 s');
          }),
        )),
  ]);
}

type Listening = 'starting' | 'ready' | 'failed';
// Per database (tests open several), once per process whichever bundle layer loads this module.
const LISTENERS = Symbol.for('contract-data-api.revocation-listeners');
const g = globalThis as typeof globalThis & { [LISTENERS]?: WeakMap<Database, Listening> };
const listeners = (g[LISTENERS] ??= new WeakMap());

/**
 * Whether this process may answer a token from its cache: true once it listens for
 * revocations made by other processes on this Postgres database (started by the first
 * call, which calls `onRevoked` on every NOTIFY), or when it cannot listen (PGlite is one
 * process; a failed LISTEN is logged and falls back to the cache's 30 s; behind a
 * transaction pooler without an unpooled URL it succeeds and hears nothing, see above).
 */
export function mayUseTokenCache(db: Database, onRevoked: () => void): boolean {
  const handle = postgresHandleOf(db);
  if (!handle) return true;
  const state = listeners.get(db);
  if (state) return state !== 'starting';
  listeners.set(db, 'starting');
  handle.listen(REVOCATION_CHANNEL, onRevoked).then(
    () => listeners.set(db, 'ready'),
    (error: unknown) => {
      listeners.set(db, 'failed');
      logger().warn({ error: describeError(error) }, 'cannot listen for revocations made by other processes; a key revoked elsewhere is refused here within 30 s');
    },
  );
  return false;
}

/**
 * Whether another instance revoked this token, or retired the presented secret by a roll,
 * recently. Both markers are asked in the same tick (one round trip with the rate-limit
 * call). False when the store cannot answer (fail open, as rate limits).
 */
export async function wasRevokedElsewhere(tokenId: string, secretHash?: string): Promise<boolean> {
  const store = processRateLimitStore();
  if (store.kind === 'memory') return false;
  try {
    const answers = await Promise.all([store.markers.has(markerKey(tokenId)), secretHash ? store.markers.has(retiredMarkerKey(secretHash)) : false]);
    return answers.some(Boolean);
  } catch {
    return false;
  }
}
