import { Ratelimit } from '@upstash/ratelimit';
import { BlockedUntilMap } from './blocked-cache';
import { createFailureLog, type FailureLog } from './failure-log';
import {
  RATE_LIMIT_BUCKETS,
  type BucketPolicies,
  type BucketPolicy,
  type RateLimitBucket,
  type RateLimitResult,
  type RateLimitStore,
} from './types';

export interface RateLimiterOptions {
  store: RateLimitStore;
  limits: BucketPolicies;
  /** After this long without an answer from the store, the request is let through (fail open). */
  timeoutMs: number;
  /** Key prefix; each bucket adds its name, so buckets never share a counter. */
  prefix?: string;
  failureLog?: FailureLog;
}

export interface RateLimiter {
  /** Consumes one request of `bucket` for `identifier`. Never rejects. */
  consume(bucket: RateLimitBucket, identifier: string): Promise<RateLimitResult>;
  /** Whether `identifier` has no request left in `bucket`, without using one. False when the store fails. */
  isExhausted(bucket: RateLimitBucket, identifier: string): Promise<boolean>;
  /**
   * The state of `bucket` for `identifier` without using a request: `allowed` says whether
   * one more would pass. Never rejects; degraded (and allowed) when the store fails.
   */
  peek(bucket: RateLimitBucket, identifier: string): Promise<RateLimitResult>;
  readonly store: RateLimitStore;
  /** Closes the store (tests, shutdown). */
  close(): Promise<void>;
}

export const DEFAULT_PREFIX = 'cda:ratelimit';

/** One sliding-window limiter per bucket over one store, failing open within `timeoutMs`. */
export function createRateLimiter(options: RateLimiterOptions): RateLimiter {
  const { store, limits, timeoutMs } = options;
  const prefix = options.prefix ?? DEFAULT_PREFIX;
  const failureLog = options.failureLog ?? createFailureLog();
  const limiters = Object.fromEntries(
    RATE_LIMIT_BUCKETS.map((bucket) => [bucket, buildLimiter(store, `${prefix}:${bucket}`, limits[bucket])]),
  ) as Record<RateLimitBucket, Ratelimit>;

  async function peek(bucket: RateLimitBucket, identifier: string): Promise<RateLimitResult> {
    const policy = limits[bucket];
    const outcome = await settleWithin(limiters[bucket].getRemaining(identifier), timeoutMs);
    if (outcome.settled === 'resolved') {
      const { remaining, reset } = outcome.value;
      return {
        allowed: remaining > 0,
        limit: policy.limit,
        remaining: Math.max(0, remaining),
        resetMs: reset,
        windowSeconds: policy.windowSeconds,
        degraded: false,
      };
    }
    failureLog.failure(`${store.kind} store did not answer a remaining-requests check`, outcome.settled === 'rejected' ? outcome.error : undefined);
    return failOpen(policy);
  }

  return {
    store,
    close: () => store.close(),
    async consume(bucket, identifier) {
      const policy = limits[bucket];
      const outcome = await settleWithin(limiters[bucket].limit(identifier), timeoutMs);
      if (outcome.settled === 'resolved') {
        failureLog.success();
        const response = outcome.value;
        return {
          allowed: response.success,
          limit: response.limit,
          remaining: Math.max(0, response.remaining),
          resetMs: response.reset,
          windowSeconds: policy.windowSeconds,
          degraded: false,
        };
      }
      failureLog.failure(
        outcome.settled === 'timeout'
          ? `${store.kind} store did not answer within ${timeoutMs} ms`
          : `${store.kind} store call failed`,
        outcome.settled === 'rejected' ? outcome.error : undefined,
      );
      return failOpen(policy);
    },
    peek,
    async isExhausted(bucket, identifier) {
      const state = await peek(bucket, identifier);
      return !state.degraded && !state.allowed;
    },
  };
}

function buildLimiter(store: RateLimitStore, prefix: string, policy: BucketPolicy): Ratelimit {
  return new Ratelimit({
    redis: store.redis,
    limiter: Ratelimit.slidingWindow(policy.limit, `${policy.windowSeconds} s`),
    prefix,
    // The library's own timeout resolves with limit 0 and reset 0 and does not cover a
    // call that throws; settleWithin() handles both, so it is switched off here.
    timeout: 0,
    analytics: false,
    enableTelemetry: false,
    // Once an identifier is denied, this process answers it from memory until the
    // window's reset, without a store call; the map is bounded (see BlockedUntilMap).
    ephemeralCache: new BlockedUntilMap(),
  });
}

/** The answer when the store cannot be asked: allowed, and nothing known to be used. */
function failOpen(policy: BucketPolicy): RateLimitResult {
  return {
    allowed: true,
    limit: policy.limit,
    remaining: policy.limit,
    resetMs: Date.now() + policy.windowSeconds * 1000,
    windowSeconds: policy.windowSeconds,
    degraded: true,
  };
}

type Outcome<T> =
  | { settled: 'resolved'; value: T }
  | { settled: 'rejected'; error: unknown }
  | { settled: 'timeout' };

/**
 * Waits for `promise` at most `ms`. The promise keeps its handlers after a timeout, so a
 * late rejection is never an unhandled rejection.
 */
function settleWithin<T>(promise: Promise<T>, ms: number): Promise<Outcome<T>> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve({ settled: 'timeout' }), ms);
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve({ settled: 'resolved', value });
      },
      (error: unknown) => {
        clearTimeout(timer);
        resolve({ settled: 'rejected', error });
      },
    );
  });
}
