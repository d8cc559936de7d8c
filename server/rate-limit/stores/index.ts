import type { Config } from '@/server/config';
import type { RateLimitStore } from '../types';
import { createMemoryStore } from './memory';
import { createRedisTcpStore } from './redis-tcp';
import { createUpstashStore } from './upstash';

export { createMemoryStore } from './memory';
export { createRedisTcpStore } from './redis-tcp';
export { createUpstashStore } from './upstash';

/**
 * The store the configuration asks for: Upstash's REST API when UPSTASH_REDIS_REST_URL
 * and _TOKEN are set (they win over REDIS_URL), else a plain Redis at REDIS_URL, else
 * this process's memory (single instance only).
 */
export function createStoreFromConfig(
  rateLimit: Config['rateLimit'],
  onConnectionError: (error: unknown) => void,
): RateLimitStore {
  if (rateLimit.upstash) {
    return createUpstashStore({ ...rateLimit.upstash, timeoutMs: rateLimit.timeoutMs });
  }
  if (rateLimit.redisUrl) {
    return createRedisTcpStore({ url: rateLimit.redisUrl, timeoutMs: rateLimit.timeoutMs, onConnectionError });
  }
  return createMemoryStore();
}
