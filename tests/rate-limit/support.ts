import { randomBytes } from 'node:crypto';
import IORedis from 'ioredis';
import { vi } from 'vitest';
import type { BucketPolicies } from '@/server/rate-limit';

/** The Redis the Redis-backed suites use (CI runs one here). */
export const TEST_REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/** Whether TEST_REDIS_URL answers PING within a second. */
export async function redisReachable(url = TEST_REDIS_URL): Promise<boolean> {
  const client = new IORedis(url, {
    lazyConnect: true,
    connectTimeout: 1_000,
    commandTimeout: 1_000,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  client.on('error', () => {});
  try {
    await client.connect();
    return (await client.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    client.disconnect();
  }
}

/** A prefix no other test or run shares, so counters never collide. */
export function uniquePrefix(label: string): string {
  return `cda-test:${label}:${process.pid}:${randomBytes(6).toString('hex')}`;
}

export function uniqueId(label = 'id'): string {
  return `${label}-${randomBytes(6).toString('hex')}`;
}

export function policies(overrides: Partial<BucketPolicies> = {}): BucketPolicies {
  return {
    general: { limit: 60, windowSeconds: 60 },
    conditional: { limit: 600, windowSeconds: 60 },
    export: { limit: 10, windowSeconds: 3600 },
    calendar: { limit: 60, windowSeconds: 3600 },
    auth_failure: { limit: 30, windowSeconds: 60 },
    webhook_manual: { limit: 60, windowSeconds: 3600 },
    sign_in_address: { limit: 10, windowSeconds: 60 },
    sign_in_account: { limit: 10, windowSeconds: 900 },
    password_reset_address: { limit: 10, windowSeconds: 3600 },
    account_mail: { limit: 5, windowSeconds: 3600 },
    ...overrides,
  };
}

/**
 * A controllable clock for Date only (what @upstash/ratelimit reads to pick windows):
 * timers, sockets and HTTP keep real time, so the real stores keep working.
 */
export function controlDate(startMs: number) {
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(startMs);
  return {
    now: () => Date.now(),
    set: (ms: number) => vi.setSystemTime(ms),
    advance: (ms: number) => vi.setSystemTime(Date.now() + ms),
    restore: () => vi.useRealTimers(),
  };
}

/** A time well away from today (so keys never meet real-time keys) at `fraction` of a window of `windowMs`. */
export function timeInWindow(windowMs: number, fraction: number, windowsAhead = 1_000): number {
  const base = (Math.floor(Date.now() / windowMs) + windowsAhead) * windowMs;
  return base + Math.round(windowMs * fraction);
}
