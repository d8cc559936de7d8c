import type { RateLimitStore } from '../types';
import { NOSCRIPT_MESSAGE, deserializeValue, scriptSha, serializeArg } from './scripts';
import { MemoryKeyspace, SCRIPT_PORTS } from './memory-scripts';

export interface MemoryStoreOptions {
  /** Clock for key expiry; @upstash/ratelimit itself reads Date.now(). */
  now?: () => number;
}

/**
 * Counters in this process's memory, for the embedded default (no Redis configured).
 * SINGLE INSTANCE ONLY: every process counts on its own, so N instances allow N times the
 * limit, and a restart forgets all counts.
 *
 * It answers the same calls as Redis, running JavaScript ports of @upstash/ratelimit's
 * Lua scripts (chosen by the script's sha), so the limiter, its key layout and its reset
 * arithmetic are the ones used with Redis. A script body runs synchronously, so it is
 * atomic like a Lua script in Redis.
 */
export function createMemoryStore(options: MemoryStoreOptions = {}): RateLimitStore {
  const now = options.now ?? Date.now;
  const markers = new Map<string, number>();
  return {
    kind: 'memory',
    redis: new MemoryRedis(new MemoryKeyspace(now)),
    markers: {
      async set(key, ttlMs) {
        markers.set(key, now() + ttlMs);
      },
      async has(key) {
        const until = markers.get(key);
        if (until !== undefined && until <= now()) markers.delete(key);
        return until !== undefined && until > now();
      },
    },
    async close() {},
  };
}

export class UnsupportedScriptError extends Error {
  constructor(sha: string) {
    super(
      `the in-memory rate-limit store has no port of script ${sha}; @upstash/ratelimit's ` +
        'scripts probably changed: port the new script in server/rate-limit/stores/memory-scripts.ts',
    );
    this.name = 'UnsupportedScriptError';
  }
}

class MemoryRedis {
  constructor(private readonly keyspace: MemoryKeyspace) {}

  async evalsha<TArgs extends unknown[], TData = unknown>(sha: string, keys: string[], args: TArgs): Promise<TData> {
    const port = SCRIPT_PORTS[sha];
    // Like Redis with an empty script cache: the library then sends the script with eval.
    if (!port) throw new Error(NOSCRIPT_MESSAGE);
    return port(this.keyspace, keys, args.map(serializeArg)) as TData;
  }

  async eval<TArgs extends unknown[], TData = unknown>(script: string, keys: string[], args: TArgs): Promise<TData> {
    const sha = scriptSha(script);
    const port = SCRIPT_PORTS[sha];
    if (!port) throw new UnsupportedScriptError(sha);
    return port(this.keyspace, keys, args.map(serializeArg)) as TData;
  }

  async get<TData>(key: string): Promise<TData | null> {
    return deserializeValue<TData>(this.keyspace.get(key));
  }

  async set<TData>(key: string, value: TData): Promise<'OK' | TData | null> {
    this.keyspace.set(key, String(serializeArg(value)));
    return 'OK';
  }
}
