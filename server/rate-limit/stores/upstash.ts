import { Redis } from '@upstash/redis';
import type { RateLimitStore } from '../types';

export interface UpstashStoreOptions {
  url: string;
  token: string;
  /** Bound of one HTTP request; the limiter gives up at the same moment and fails open. */
  timeoutMs: number;
}

/** Upstash Redis over its REST API (production on Vercel). */
export function createUpstashStore(options: UpstashStoreOptions): RateLimitStore {
  const client = new Redis({
    url: options.url,
    token: options.token,
    // A fresh signal per HTTP request (a function, not one shared signal): a server that
    // never answers gets its request aborted instead of holding a socket forever. With a
    // function, @upstash/redis rethrows the abort instead of turning it into a result.
    signal: () => AbortSignal.timeout(options.timeoutMs),
    // The default (5 retries, exponential backoff) spans seconds, far beyond the budget
    // of one request; one quick retry still covers a keep-alive socket closed by the server.
    retry: { retries: 1, backoff: () => 20 },
    enableTelemetry: false,
  });
  return {
    kind: 'upstash',
    redis: client,
    markers: {
      async set(key, ttlMs) {
        await client.set(key, 1, { px: ttlMs });
      },
      // GETEX rather than GET: @upstash/redis pipelines reads and writes apart, and the
      // limiter's EVALSHA goes with the writes; GETEX without options reads like GET.
      async has(key) {
        return (await client.getex(key)) !== null;
      },
    },
    async close() {
      // HTTP only: nothing to release.
    },
  };
}
