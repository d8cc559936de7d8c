import { config } from '@/server/config';
import { createFailureLog } from './failure-log';
import { createRateLimiter, type RateLimiter } from './limiter';
import { createStoreFromConfig } from './stores';
import type { BucketPolicies, RateLimitBucket, RateLimitResult, RateLimitStore } from './types';

/**
 * Rate limits of the API: sliding windows from @upstash/ratelimit over Upstash, a plain
 * Redis or this process's memory (see stores/index.ts for the choice), failing open
 * when the store is down or slow. See README.md in this folder.
 */

export type {
  BucketPolicies,
  BucketPolicy,
  RateLimitBucket,
  RateLimitResult,
  RateLimitStore,
  StoreKind,
} from './types';
export { RATE_LIMIT_BUCKETS } from './types';
export { rateLimitHeaders } from './headers';
export { createRateLimiter, DEFAULT_PREFIX, type RateLimiter, type RateLimiterOptions } from './limiter';
export { createFailureLog, type FailureLog } from './failure-log';
export { createMemoryStore, createRedisTcpStore, createUpstashStore, createStoreFromConfig } from './stores';

/**
 * Consumes one request of `bucket` for `identifier` (an API key id, or a client address
 * for auth_failure) with the process-wide limiter built from config(). Never rejects:
 * when the store fails or is slow, it resolves within the configured timeout with
 * `allowed: true, degraded: true`.
 */
export function consumeRateLimit(bucket: RateLimitBucket, identifier: string): Promise<RateLimitResult> {
  return processRateLimiter().consume(bucket, identifier);
}

/** Whether `identifier` has used up `bucket`, without consuming a request (false if the store fails). */
export function isRateLimitExhausted(bucket: RateLimitBucket, identifier: string): Promise<boolean> {
  return processRateLimiter().isExhausted(bucket, identifier);
}

/** The state of `bucket` for `identifier`, without consuming a request (degraded if the store fails). */
export function peekRateLimit(bucket: RateLimitBucket, identifier: string): Promise<RateLimitResult> {
  return processRateLimiter().peek(bucket, identifier);
}

/** The process-wide limiter's store, for the few other short-lived facts instances share (revoked tokens). */
export function processRateLimitStore(): RateLimitStore {
  return processRateLimiter().store;
}

/**
 * Next.js can evaluate this module once per bundle layer (route handlers, server
 * actions, instrumentation), each with its own module scope; globalThis is shared by all
 * of them, so the limiters, the connection and the counters of the in-memory store
 * exist once per process.
 */
const SINGLETON = Symbol.for('contract-data-api.rate-limiter');
type GlobalWithLimiter = typeof globalThis & { [SINGLETON]?: RateLimiter };

export function processRateLimiter(): RateLimiter {
  const g = globalThis as GlobalWithLimiter;
  g[SINGLETON] ??= buildFromConfig();
  return g[SINGLETON];
}

/** Closes and forgets the process-wide limiter; the next call builds it again (tests, shutdown). */
export async function resetProcessRateLimiter(): Promise<void> {
  const g = globalThis as GlobalWithLimiter;
  const limiter = g[SINGLETON];
  delete g[SINGLETON];
  await limiter?.close();
}

function buildFromConfig(): RateLimiter {
  const { rateLimit } = config();
  const failureLog = createFailureLog();
  const limits: BucketPolicies = {
    general: rateLimit.general,
    conditional: rateLimit.conditional,
    export: rateLimit.export,
    calendar: rateLimit.calendar,
    auth_failure: rateLimit.authFailures,
    webhook_manual: rateLimit.webhookManual,
    sign_in_address: rateLimit.signInAddress,
    sign_in_account: rateLimit.signInAccount,
    password_reset_address: rateLimit.passwordResetAddress,
    account_mail: rateLimit.accountMail,
  };
  return createRateLimiter({
    store: createStoreFromConfig(rateLimit, (error) => failureLog.failure('redis connection error', error)),
    limits,
    timeoutMs: rateLimit.timeoutMs,
    failureLog,
  });
}
