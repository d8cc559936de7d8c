import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createRedisTcpStore } from '@/server/rate-limit';
import { behaviourSuite } from './behaviour-suite';
import { TEST_REDIS_URL, redisReachable } from './support';

const reachable = await redisReachable();
if (!reachable) {
  console.warn(`SKIPPED: Redis is not reachable at ${TEST_REDIS_URL}; the Redis-over-TCP suite did not run.`);
}

describe.skipIf(!reachable)(`Redis over TCP (${TEST_REDIS_URL})`, () => {
  const connectionErrors: unknown[] = [];
  behaviourSuite('redis', () =>
    createRedisTcpStore({
      url: TEST_REDIS_URL,
      timeoutMs: 3_000,
      onConnectionError: (error) => connectionErrors.push(error),
    }),
  );

  it('strips the shebang Redis rejects, then runs scripts by sha', async () => {
    const store = createRedisTcpStore({ url: TEST_REDIS_URL, timeoutMs: 3_000, onConnectionError: () => {} });
    const script = '#!lua flags=allow-key-locking\nreturn {tonumber(ARGV[1]) + 1, KEYS[1]}';
    const sha = createHash('sha1').update(script).digest('hex');
    try {
      // Unknown to the adapter: NOSCRIPT without a round trip, as @upstash/ratelimit expects.
      await expect(store.redis.evalsha(sha, ['k'], [1])).rejects.toThrow(/NOSCRIPT/);
      expect(await store.redis.eval(script, ['k'], [1])).toEqual([2, 'k']);
      expect(await store.redis.evalsha(sha, ['k'], [41])).toEqual([42, 'k']);
    } finally {
      await store.close();
    }
    expect(connectionErrors).toEqual([]);
  });
});
