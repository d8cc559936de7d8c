import { describe, expect, it } from 'vitest';
import { createMemoryStore, createRateLimiter } from '@/server/rate-limit';
import { MemoryKeyspace } from '@/server/rate-limit/stores/memory-scripts';
import { behaviourSuite } from './behaviour-suite';
import { policies } from './support';

behaviourSuite('memory', () => createMemoryStore());

describe('the memory store itself', () => {
  it('refuses a script it has no port of (so an upgrade of @upstash/ratelimit cannot go unnoticed)', async () => {
    const store = createMemoryStore();
    await expect(store.redis.eval('return 1', [], [])).rejects.toThrow(/no port of script/);
    await expect(store.redis.evalsha('0'.repeat(40), [], [])).rejects.toThrow(/NOSCRIPT/);
  });

  it('knows the scripts of the installed @upstash/ratelimit: no request is degraded', async () => {
    const limiter = createRateLimiter({ store: createMemoryStore(), limits: policies(), timeoutMs: 1_000 });
    const results = await Promise.all([limiter.consume('general', 'a'), limiter.consume('export', 'a')]);
    expect(results.map((r) => r.degraded)).toEqual([false, false]);
  });

  it('expires keys and sweeps expired ones away, so memory stays bounded', () => {
    let now = 1_000_000;
    const keyspace = new MemoryKeyspace(() => now);
    expect(keyspace.incrBy('a', 1)).toBe(1);
    keyspace.pexpire('a', 5_000);
    expect(keyspace.incrBy('a', 2)).toBe(3);
    now += 4_999;
    expect(keyspace.get('a')).toBe('3');
    now += 1;
    expect(keyspace.get('a')).toBeNull();

    for (let i = 0; i < 100; i++) {
      keyspace.incrBy(`k${i}`, 1);
      keyspace.pexpire(`k${i}`, 1_000);
    }
    expect(keyspace.size).toBe(100);
    now += 20_000;
    keyspace.incrBy('trigger', 1);
    expect(keyspace.size).toBe(1);
  });
});
