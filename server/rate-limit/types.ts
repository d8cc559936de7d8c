import type { Ratelimit } from '@upstash/ratelimit';
import type { Redis } from '@upstash/redis';

/** The independent quotas of the API; each has its own keys in the store. */
export type RateLimitBucket =
  | 'general'
  | 'conditional'
  | 'export'
  | 'calendar'
  | 'auth_failure'
  | 'webhook_manual'
  | 'sign_in_address'
  | 'sign_in_account'
  | 'password_reset_address'
  | 'account_mail';

export const RATE_LIMIT_BUCKETS: readonly RateLimitBucket[] = [
  'general',
  'conditional',
  'export',
  'calendar',
  'auth_failure',
  'webhook_manual',
  'sign_in_address',
  'sign_in_account',
  'password_reset_address',
  'account_mail',
];

/** One bucket's quota: `limit` requests per sliding window of `windowSeconds`. */
export interface BucketPolicy {
  limit: number;
  windowSeconds: number;
}

export type BucketPolicies = Record<RateLimitBucket, BucketPolicy>;

export interface RateLimitResult {
  allowed: boolean;
  limit: number;
  /** Requests left in the window after this one; never negative. */
  remaining: number;
  /** Epoch milliseconds at which the window frees capacity (the limiter's `reset`). */
  resetMs: number;
  windowSeconds: number;
  /** True when the store failed or timed out and the request was let through (fail open). */
  degraded: boolean;
}

/**
 * The client @upstash/ratelimit talks to. Its declared type asks for evalsha, get and set;
 * it also calls eval after a NOSCRIPT error, so eval is required here too.
 */
export type RatelimitRedis = ConstructorParameters<typeof Ratelimit>[0]['redis'] & Pick<Redis, 'eval'>;

export type StoreKind = 'upstash' | 'redis' | 'memory';

/** Where the counters live. All three kinds run the same @upstash/ratelimit limiter. */
export interface RateLimitStore {
  readonly kind: StoreKind;
  readonly redis: RatelimitRedis;
  /**
   * Short-lived facts the instances share besides counts (a revoked token). `has` is sent
   * so that it joins the commands of the same tick in one round trip, as the limiter's.
   */
  readonly markers: {
    set(key: string, ttlMs: number): Promise<void>;
    has(key: string): Promise<boolean>;
  };
  /** Releases connections and timers; the store cannot be used afterwards. */
  close(): Promise<void>;
}
