import { organizationIdsOf, type AccessScope } from '@/db/queries/contracts';
import { verifyApiKey } from '@/server/api-keys/verify';
import { AppError } from '@/server/errors';
import { isRateLimitExhausted, type RateLimitBucket } from '@/server/rate-limit';
import type { RequestContext } from '@/server/trpc/init';
import { SHARED_CLIENT_BUCKET } from './client-address';
import { enforceRateLimit } from './rate-limit-hook';

export interface ApiCaller extends AccessScope {
  keyId: string;
}

const UNAUTHORIZED_MESSAGE = 'Missing or invalid API key. Send a valid key in the X-API-Key header.';

/**
 * Authentication of every REST request, shared by the tRPC procedures and the export
 * route: verify the key (one 401 for every kind of bad key), apply the key's rate limit,
 * then read the caller's organisations at request time so that a removed membership
 * is gone on the next call.
 *
 * Failed attempts are limited per client address so that keys cannot be guessed at
 * speed: once an address has used up its failures, every request from it is a 429,
 * even one with a correct key, so a guess can no longer be told apart from a miss.
 * Without a trustworthy address (no proxy configured) every client shares one bucket:
 * there bad keys still get their 429, but a correct key is served, or anyone could lock
 * every integration out with 30 bad keys a minute.
 */
export async function authenticateApiRequest(
  ctx: Pick<RequestContext, 'db' | 'headers' | 'clientIp' | 'setHeader'>,
  bucket: Exclude<RateLimitBucket, 'auth_failure'>,
): Promise<ApiCaller> {
  const [blocked, principal] = await Promise.all([
    isRateLimitExhausted('auth_failure', ctx.clientIp),
    verifyApiKey(ctx.db, ctx.headers.get('x-api-key')),
  ]);
  if (!principal || (blocked && ctx.clientIp !== SHARED_CLIENT_BUCKET)) {
    // Throws the 429 once the address is out of failures; until then the answer is 401.
    await enforceRateLimit(ctx, 'auth_failure', ctx.clientIp, { headers: false });
    throw new AppError('unauthorized', UNAUTHORIZED_MESSAGE);
  }
  await enforceRateLimit(ctx, bucket, principal.keyId);
  return {
    keyId: principal.keyId,
    userId: principal.userId,
    organizationIds: await organizationIdsOf(ctx.db, principal.userId),
  };
}
