import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUpstashStore } from '@/server/rate-limit';
import { startUpstashProxy, type UpstashProxy } from '../helpers/upstash-proxy';
import { behaviourSuite } from './behaviour-suite';
import { TEST_REDIS_URL, redisReachable } from './support';

const reachable = await redisReachable();
if (!reachable) {
  console.warn(`SKIPPED: Redis is not reachable at ${TEST_REDIS_URL}; the Upstash REST suite did not run.`);
}

describe.skipIf(!reachable)(`@upstash/redis over REST (test proxy in front of ${TEST_REDIS_URL})`, () => {
  let proxy: UpstashProxy;
  beforeAll(async () => {
    proxy = await startUpstashProxy({ redisUrl: TEST_REDIS_URL });
  });
  afterAll(() => proxy?.close());

  behaviourSuite('upstash', () => createUpstashStore({ url: proxy.url, token: proxy.token, timeoutMs: 3_000 }));

  it('really went over HTTP, through the auto-pipeline', () => {
    expect(proxy.requests['/pipeline']).toBeGreaterThan(0);
  });
});
