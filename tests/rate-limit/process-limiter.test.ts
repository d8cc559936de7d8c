import { afterEach, describe, expect, it, vi } from 'vitest';
import { parseConfig } from '@/server/config';
import { createStoreFromConfig } from '@/server/rate-limit';
import { uniqueId } from './support';

describe('the process-wide limiter', () => {
  afterEach(async () => {
    const { resetProcessRateLimiter } = await import('@/server/rate-limit');
    await resetProcessRateLimiter();
    vi.resetModules();
  });

  it('consumes with the limits from the configuration', async () => {
    const { consumeRateLimit } = await import('@/server/rate-limit');
    const id = uniqueId('key');
    const first = await consumeRateLimit('general', id);
    const second = await consumeRateLimit('general', id);
    expect(first).toMatchObject({ allowed: true, limit: 60, windowSeconds: 60, degraded: false });
    expect(second.remaining).toBe(first.remaining - 1);
    expect(await consumeRateLimit('export', id)).toMatchObject({ limit: 10, windowSeconds: 3600 });
    expect(await consumeRateLimit('auth_failure', '203.0.113.7')).toMatchObject({ limit: 30, windowSeconds: 60 });
  });

  it('is created once per process, even when the module is loaded again (another bundle layer)', async () => {
    const a = await import('@/server/rate-limit');
    const limiter = a.processRateLimiter();
    vi.resetModules();
    const b = await import('@/server/rate-limit');
    expect(b).not.toBe(a);
    expect(b.processRateLimiter()).toBe(limiter);
    // And the counts are shared: the second copy sees the first copy's request.
    const id = uniqueId('key');
    const first = await a.consumeRateLimit('general', id);
    expect((await b.consumeRateLimit('general', id)).remaining).toBe(first.remaining - 1);
  });
});

describe('the store is chosen by the environment', () => {
  const upstash = { UPSTASH_REDIS_REST_URL: 'https://example.upstash.io', UPSTASH_REDIS_REST_TOKEN: 'tok' };
  const redis = { REDIS_URL: 'redis://127.0.0.1:6379' };
  it.each([
    ['UPSTASH_REDIS_REST_URL and _TOKEN', upstash, 'upstash'],
    ['REDIS_URL', redis, 'redis'],
    ['both (Upstash wins)', { ...upstash, ...redis }, 'upstash'],
    ['neither', {}, 'memory'],
  ])('%s -> %s', async (_name, env, kind) => {
    // Nothing connects here: the Redis client connects lazily on the first request.
    const store = createStoreFromConfig(parseConfig(env).rateLimit, () => {});
    expect(store.kind).toBe(kind);
    await store.close();
  });

  it('reads limits and timeout from the environment', () => {
    const { rateLimit } = parseConfig({
      RATE_LIMIT_GENERAL_PER_WINDOW: '100',
      RATE_LIMIT_GENERAL_WINDOW_SECONDS: '30',
      RATE_LIMIT_TIMEOUT_MS: '250',
    });
    expect(rateLimit.general).toEqual({ limit: 100, windowSeconds: 30 });
    expect(rateLimit.timeoutMs).toBe(250);
  });
});
