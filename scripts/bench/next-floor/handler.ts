import 'server-only';
import type { CallerScope } from '@/db/queries/access';
import { wasRevokedElsewhere } from '@/server/access/revocations';
import { clientAddressOf, SHARED_CLIENT_BUCKET } from '@/server/http/client-address';
import { consumeRateLimit, isRateLimitExhausted, rateLimitHeaders } from '@/server/rate-limit';
import { failure, openFloorDatabase, scopeOf, verifyKey, type Answer, type FloorDatabase } from '../floor-core';

/**
 * The Next.js floor's one request path: what the app does around its answer, without
 * tRPC, trpc-to-openapi, zod or Drizzle. The same key check (the client address's failed
 * attempts asked of the store while the key is verified, format and checksum, the cached
 * lookup by hash), the same rate-limit call (the key's `general` bucket through the app's
 * own limiter, with the revocation marker in the same round trip for a cached key) and its
 * headers, the membership query, then the same SQL as the app for the answer
 * (../floor-core.ts). Bad keys get a plain 401; the benchmark sends none.
 */

// One pool per process, whichever route bundle evaluates this module first.
const DB = Symbol.for('cda-bench.next-floor.database');
function database(): FloorDatabase {
  const g = globalThis as typeof globalThis & { [DB]?: FloorDatabase };
  const url = process.env.DATABASE_URL;
  if (!url) throw new Error('DATABASE_URL is required');
  g[DB] ??= openFloorDatabase(url, 'cda-bench-next-floor');
  return g[DB];
}

const json = ({ status, body }: Answer, headers: Headers) => new Response(JSON.stringify(body), { status, headers });

export async function serve(req: Request, answer: (db: FloorDatabase, scope: CallerScope) => Promise<Answer>): Promise<Response> {
  const headers = new Headers({
    'Content-Type': 'application/json; charset=utf-8',
    'X-Request-Id': `req_${crypto.randomUUID().replaceAll('-', '')}`,
    'Cache-Control': 'no-store',
  });
  const db = database();
  const address = clientAddressOf(req.headers);
  const [blocked, key] = await Promise.all([isRateLimitExhausted('auth_failure', address), verifyKey(db, req.headers.get('x-api-key'))]);
  if (!key || (blocked && address !== SHARED_CLIENT_BUCKET)) return json(failure(401, 'unauthorized'), headers);
  const [limit, revoked] = await Promise.all([consumeRateLimit('general', key.tokenId), key.cached ? wasRevokedElsewhere(key.tokenId) : false]);
  if (!limit.degraded || !limit.allowed) {
    for (const [name, value] of Object.entries(rateLimitHeaders(limit, Date.now(), 'general'))) headers.set(name, value);
  }
  if (!limit.allowed) return json(failure(429, 'rate_limited'), headers);
  if (revoked) return json(failure(401, 'unauthorized'), headers);
  return json(await answer(db, await scopeOf(db, key.userId)), headers);
}
