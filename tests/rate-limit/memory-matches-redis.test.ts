import { afterEach, describe, expect, it } from 'vitest';
import { createMemoryStore, createRateLimiter, createRedisTcpStore, type RateLimiter } from '@/server/rate-limit';
import { TEST_REDIS_URL, policies, redisReachable, timeInWindow, uniqueId, uniquePrefix, controlDate } from './support';

const reachable = await redisReachable();

/**
 * The in-memory store runs JavaScript ports of the Lua scripts. Same random walk through
 * time on both, same answers expected: allowed, remaining and reset, request by request.
 */
describe.skipIf(!reachable)('the in-memory store answers exactly like Redis', () => {
  const open: RateLimiter[] = [];
  let clock: ReturnType<typeof controlDate> | undefined;
  afterEach(async () => {
    clock?.restore();
    await Promise.all(open.splice(0).map((l) => l.close()));
  });

  it('over 300 requests at random times', async () => {
    const windowMs = 5_000;
    const limits = policies({ general: { limit: 7, windowSeconds: windowMs / 1000 } });
    const make = (store: Parameters<typeof createRateLimiter>[0]['store']) => {
      const limiter = createRateLimiter({ store, limits, timeoutMs: 3_000, prefix: uniquePrefix('diff') });
      open.push(limiter);
      return limiter;
    };
    const memory = make(createMemoryStore());
    const redis = make(createRedisTcpStore({ url: TEST_REDIS_URL, timeoutMs: 3_000, onConnectionError: () => {} }));
    clock = controlDate(timeInWindow(windowMs, 0.3));
    let seed = 42;
    const random = () => ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31);
    const id = uniqueId('diff');
    let denied = 0;
    for (let i = 0; i < 300; i++) {
      // Mostly small steps (bursts), sometimes a long pause.
      clock.advance(random() < 0.9 ? Math.floor(random() * 300) : Math.floor(random() * windowMs * 2));
      const [m, r] = await Promise.all([memory.consume('general', id), redis.consume('general', id)]);
      expect({ step: i, ...m }).toEqual({ step: i, ...r });
      if (!r.allowed) denied++;
    }
    // The walk did reach the limit often enough to mean something.
    expect(denied).toBeGreaterThan(30);
    expect(denied).toBeLessThan(270);
  });
});
