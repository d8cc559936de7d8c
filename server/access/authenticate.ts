import { addressAllowed, type Permission } from '@/lib/key-restrictions';
import type { TokenKind } from '@/lib/tokens';
import { AppError } from '@/server/errors';
import { clientIpOf, SHARED_CLIENT_BUCKET } from '@/server/http/client-address';
import type { RequestContext } from '@/server/http/context';
import { countFailedKeyAttempt } from '@/server/observability/metrics';
import { inSpan } from '@/server/observability/tracing';
import { setRequestKeyId } from '@/server/observability/request';
import { isRateLimitExhausted, type RateLimitBucket } from '@/server/rate-limit';
import { queueAddressRefusal } from '@/server/security-log/record';
import { enforceRateLimit, showRateLimit } from './rate-limit';
import { wasRevokedElsewhere } from './revocations';
import { loadTokenScope, type CallerScope } from './scope';
import { forgetVerifiedToken, verifyToken } from './tokens';

/** A request's verified token and what it may see. */
export interface Caller {
  tokenId: string;
  scope: CallerScope;
}

/**
 * A caller whose request is not counted yet (`authenticate(..., { chargeLater: true })`):
 * the transport validates the rest of the request first, so that a malformed request does
 * not spend the quota, then calls `charge` (which throws the 429), or `show` to send the
 * rate-limit headers with the 400 without consuming anything.
 */
export interface UncountedCaller extends Caller {
  charge: () => Promise<void>;
  show: () => Promise<void>;
  /**
   * What the key may see, read again (its restrictions were checked already): for an
   * answer that must not use an access older than something it read after
   * authenticating (the export's X-Events-Cursor). A key whose row is gone is refused.
   */
  rescope: () => Promise<CallerScope>;
}

export interface Credential {
  kind: TokenKind;
  /** The token as presented (a header, a file name); undefined when none was. */
  presented: string | null | undefined;
  /** The quota a valid token's requests count against. */
  bucket: Exclude<RateLimitBucket, 'auth_failure'>;
  /** Whether the bucket's headers are sent (not for calendar feeds: calendar apps ignore them). */
  rateLimitHeaders: boolean;
  /** The one answer to every bad token (401 for API keys, 404 for a feed address). */
  refusal: () => AppError;
  /** The WWW-Authenticate challenge sent with the refusal, if any (RFC 9110 11.6.1). */
  challenge?: string;
  /** The permission the operation needs (API keys; docs/keys.md). Calendar feeds have none and no address list. */
  permission?: Permission;
}

/**
 * Authentication of every request that carries a token, whatever the transport: verify
 * the token (one refusal for every kind of bad token), read its scope and restrictions at
 * request time (a removed membership is gone on the next call), check an API key's
 * allowed addresses and permission, then apply its rate limit.
 *
 * Failed attempts are limited per client address so that tokens cannot be guessed at
 * speed: once an address has used up its failures, every request from it is a 429, even
 * one with a correct token, so a guess can no longer be told apart from a miss, and its
 * token is not even looked up (no database work for a blocked guesser). Without a
 * trustworthy address (no proxy configured) every client shares one bucket: there bad
 * tokens still get their 429, but a correct token is served, or anyone could lock every
 * integration out with 30 bad keys a minute; so there every token is still looked up.
 */
export async function authenticate(
  ctx: Pick<RequestContext, 'db' | 'clientAddress' | 'headers' | 'setHeader' | 'deferredRateLimit'>,
  credential: Credential,
  options: { chargeLater: true },
): Promise<UncountedCaller>;
export async function authenticate(
  ctx: Pick<RequestContext, 'db' | 'clientAddress' | 'headers' | 'setHeader' | 'deferredRateLimit'>,
  credential: Credential,
  options?: { chargeLater?: false },
): Promise<Caller>;
export async function authenticate(
  ctx: Pick<RequestContext, 'db' | 'clientAddress' | 'headers' | 'setHeader' | 'deferredRateLimit'>,
  credential: Credential,
  options: { chargeLater?: boolean } = {},
): Promise<Caller | UncountedCaller> {
  const refuse = () => {
    if (credential.challenge) ctx.setHeader('WWW-Authenticate', credential.challenge);
    return credential.refusal();
  };
  const known = ctx.clientAddress !== SHARED_CLIENT_BUCKET;
  // One look at the address's failures, started at once. A known address out of attempts
  // gets 429 whatever it sends, so its token is not looked up: a blocked guesser costs no
  // database work (a token in this process's cache needs none and does not wait for the
  // answer). In the shared bucket a correct token must still be served, so it is looked up.
  const exhausted = inSpan('rate_limit check', async (span) => {
    span?.setAttribute('app.rate_limit.bucket', 'auth_failure');
    const result = await isRateLimitExhausted('auth_failure', ctx.clientAddress);
    span?.setAttribute('app.rate_limit.exhausted', result);
    return result;
  });
  const [blocked, principal] = await Promise.all([
    exhausted,
    // The key check's span: the token's kind and the outcome, never the token or its hash.
    inSpan('verify token', async (span) => {
      const verified = await verifyToken(ctx.db, credential.kind, credential.presented, undefined, known ? { mayLookUp: async () => !(await exhausted) } : {});
      span?.setAttributes({ 'app.token.kind': credential.kind, 'app.token.valid': verified !== undefined, 'app.token.cached': verified?.cached ?? false });
      return verified;
    }),
  ]);
  if (!principal || (blocked && known)) {
    countFailedKeyAttempt(credential.kind);
    // Throws the 429 once the address is out of failures; until then the answer is the refusal.
    await enforceRateLimit(ctx, 'auth_failure', ctx.clientAddress, { headers: false });
    throw refuse();
  }
  const { tokenId } = principal;
  // The request's log line names the key by its id (never the token or its hash).
  setRequestKeyId(tokenId, credential.kind);
  const deferred = ctx.deferredRateLimit;
  // The token's scope and restrictions are read from the database on every request (an
  // edit, "remove access" or an organisation's policy applies at once everywhere), and
  // checked before the quota is touched: a refused request spends none of it.
  const tokenScope = await loadTokenScope(ctx.db, tokenId);
  if (!tokenScope) {
    countFailedKeyAttempt(credential.kind);
    setRequestKeyId(undefined);
    throw refuse();
  }
  if (credential.kind === 'api_key') await checkRestrictions(ctx, credential, tokenScope, tokenId);
  const charge = () => enforceRateLimit(ctx, credential.bucket, tokenId, { headers: credential.rateLimitHeaders });
  // A conditional request counts against the conditional quota now, and against the key's
  // own quota only if its answer is not a 304 (the transport decides: DeferredRateLimit).
  const show = async () => {
    if (credential.rateLimitHeaders) await showRateLimit(ctx, credential.bucket, tokenId);
  };
  // A token answered from the cache may have been revoked, or its secret retired by a
  // roll, on another instance: its markers are read together with the rate-limit call
  // (one round trip to the store).
  const [, revoked] = await Promise.all([
    options.chargeLater ? undefined : deferred ? enforceRateLimit(ctx, 'conditional', tokenId, { headers: false }) : charge(),
    principal.cached ? wasRevokedElsewhere(tokenId, principal.secretHash) : false,
  ]);
  if (revoked) {
    countFailedKeyAttempt(credential.kind);
    setRequestKeyId(undefined);
    forgetVerifiedToken(tokenId);
    throw refuse();
  }
  if (deferred && !options.chargeLater) {
    deferred.charge = charge;
    deferred.show = show;
  }
  const { scope } = tokenScope;
  const rescope = async () => {
    const again = await loadTokenScope(ctx.db, tokenId);
    if (!again) throw refuse();
    return again.scope;
  };
  return options.chargeLater ? { tokenId, scope, charge, show, rescope } : { tokenId, scope };
}

/**
 * An API key's allowed addresses and permissions (docs/keys.md), before any quota: a
 * request from another address is a 403 ip_not_allowed that counts as a failed attempt of
 * that address (a stolen key used elsewhere cannot exhaust its owner's quota, and cannot
 * be tried at speed either); a key without the operation's permission gets a 403
 * insufficient_scope with the RFC 6750 challenge, and counts nowhere.
 */
async function checkRestrictions(
  ctx: Pick<RequestContext, 'db' | 'clientAddress' | 'headers' | 'setHeader'>,
  credential: Credential,
  restrictions: { allowedAddresses: readonly string[]; permissions: readonly string[]; ownerOrganizationId: string | null },
  tokenId: string,
): Promise<void> {
  if (restrictions.allowedAddresses.length > 0) {
    const address = clientIpOf(ctx.headers);
    if (!addressAllowed(restrictions.allowedAddresses, address)) {
      countFailedKeyAttempt(credential.kind);
      // The security log, once per key and address per hour, batched (never on this path).
      queueAddressRefusal(ctx.db, {
        kind: 'api_key.address_refused',
        subjectUserId: null, // the key's owner (or creator), filled in by the insert
        organizationId: restrictions.ownerOrganizationId,
        objectType: 'api_key',
        objectId: tokenId,
        actor: { kind: 'api_key', userId: null, label: 'API key', clientAddress: address ?? null, userAgent: ctx.headers.get('user-agent')?.slice(0, 300) ?? null },
      });
      // Throws the 429 once the address is out of failed attempts.
      await enforceRateLimit(ctx, 'auth_failure', ctx.clientAddress, { headers: false });
      const seen = address === undefined ? 'an address the API cannot determine (no trusted proxy is configured)' : address;
      throw new AppError('ip_not_allowed', `This API key does not allow requests from ${seen}. Use it from one of its allowed addresses, or edit the key's allowed addresses under Settings → API keys.`);
    }
  }
  const needed = credential.permission;
  if (needed && !restrictions.permissions.includes(needed)) {
    ctx.setHeader('WWW-Authenticate', `Bearer error="insufficient_scope", scope="${needed}"`);
    throw new AppError('insufficient_scope', `This API key lacks the permission ${needed}, which this operation needs. Create or edit a key with ${needed} under Settings → API keys.`);
  }
}

const UNAUTHORIZED_MESSAGE = 'Missing or invalid API key. Send a valid key in the X-API-Key header or as Authorization: Bearer <key>.';
const REALM = 'realm="Contract Data API"';
/**
 * The WWW-Authenticate of every 401 (RFC 9110 11.6.1): a Bearer challenge (RFC 6750) and
 * a second one naming the X-API-Key header, for clients of that header, which no
 * registered scheme describes. One challenge for every bad key, missing ones included,
 * like the body: the answer says nothing about which kind of bad key it was (RFC 6750's
 * error="invalid_token" would tell a sent key from none; an API key cannot be refreshed
 * anyway).
 */
const API_KEY_CHALLENGE = `Bearer ${REALM}, ApiKey ${REALM}, header="X-API-Key"`;

// RFC 6750 2.1: "Bearer" (any case, RFC 9110 11.1), one or more spaces, the token. Other
// schemes are not this API's: a deployment behind Basic authentication (a staging proxy)
// still reads X-API-Key.
const BEARER = /^bearer(?: +(.*))?$/i;

/**
 * The key a request presents: X-API-Key, or Authorization: Bearer <key>. Both with the
 * same key is fine; two different keys are a 400, not a guess between them.
 */
function presentedApiKey(headers: Headers): string | null {
  const header = headers.get('x-api-key');
  const bearer = BEARER.exec(headers.get('authorization')?.trim() ?? '');
  // "Bearer" without a token presents an empty (malformed) key: refused like any bad key.
  const fromBearer = bearer ? (bearer[1] ?? '').trim() : null;
  if (header !== null && fromBearer && header !== fromBearer) {
    const message = 'Send the API key once: in X-API-Key or as Authorization: Bearer, not two different keys.';
    throw new AppError('invalid_request', message, [{ param: 'Authorization', message }]);
  }
  return header ?? fromBearer;
}

/** The API key of a REST request (X-API-Key or Authorization: Bearer), counted against `bucket`. */
export function apiKeyCredential(headers: Headers, bucket: Credential['bucket']): Credential {
  const presented = presentedApiKey(headers);
  return {
    kind: 'api_key',
    presented,
    bucket,
    rateLimitHeaders: true,
    refusal: () => new AppError('unauthorized', UNAUTHORIZED_MESSAGE),
    challenge: API_KEY_CHALLENGE,
    // The export needs contracts:export; every other operation reads.
    permission: bucket === 'export' ? 'contracts:export' : 'contracts:read',
  };
}
