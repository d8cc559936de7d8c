import IORedis from 'ioredis';
import type { RateLimitStore } from '../types';
import { NOSCRIPT_MESSAGE, deserializeValue, scriptSha, serializeArg, stripLuaShebang } from './scripts';

export interface RedisTcpStoreOptions {
  url: string;
  /** Bound of one command; the limiter gives up at the same moment and fails open. */
  timeoutMs: number;
  /** Connection errors that ioredis reports as 'error' events (which would crash the process if unheard). */
  onConnectionError: (error: unknown) => void;
}

/**
 * A plain Redis (self-hosting) over TCP through ioredis, adapted to the calls
 * @upstash/ratelimit makes: evalsha, eval, get, set.
 */
export function createRedisTcpStore(options: RedisTcpStoreOptions): RateLimitStore {
  const client = new IORedis(options.url, {
    // No socket until the first request: importing the module must not connect.
    lazyConnect: true,
    // The offline queue lets the very first commands wait for the lazy connection; while
    // Redis is down the adapter refuses to queue (see assertUsable), and any queued
    // command is failed at the first failed (re)connection attempt...
    enableOfflineQueue: true,
    maxRetriesPerRequest: 0,
    // ...or when it has waited timeoutMs, so nothing waits on a silent server.
    commandTimeout: options.timeoutMs,
    // Connecting is not on a request's critical path (requests give up after timeoutMs),
    // so allow a slow handshake somewhat longer than one request.
    connectTimeout: Math.max(2_000, options.timeoutMs),
    // Keep trying in the background, backing off to two attempts a second: a Redis that is
    // back is used again within half a second, and /api/health/ready (checked once a
    // second) says so within two. A refused connection costs a down Redis nothing.
    retryStrategy: (attempt) => Math.min(attempt * 100, 500),
    // Commands issued in the same tick share one round trip: the check for a revoked key
    // travels with the rate-limit call of the same request (server/access/revocations.ts).
    enableAutoPipelining: true,
  });
  client.on('error', options.onConnectionError);
  const redis = new IoRedisScriptAdapter(client);
  return {
    kind: 'redis',
    redis,
    markers: {
      async set(key, ttlMs) {
        await redis.set(key, 1, { px: ttlMs });
      },
      async has(key) {
        return (await redis.get(key)) !== null;
      },
    },
    async close() {
      // disconnect() rather than quit(): no waiting on a Redis that may be down, and no
      // reconnection afterwards.
      client.disconnect();
    },
  };
}

export class StoreUnavailableError extends Error {
  constructor(status: string) {
    super(`Redis connection is ${status}`);
    this.name = 'StoreUnavailableError';
  }
}

/**
 * Runs @upstash/ratelimit's scripts on a plain Redis. The library calls
 * evalsha(sha of the script as written) first and eval(script) on NOSCRIPT. Redis only
 * knows the stripped script, under another sha, so the adapter keeps the mapping: the
 * first call per script answers NOSCRIPT without a round trip, eval runs the stripped
 * script (which also caches it in Redis), and later calls are a single EVALSHA.
 */
export class IoRedisScriptAdapter {
  private readonly strippedShaOf = new Map<string, string>();

  constructor(private readonly client: IORedis) {}

  async evalsha<TArgs extends unknown[], TData = unknown>(sha: string, keys: string[], args: TArgs): Promise<TData> {
    this.assertUsable();
    const strippedSha = this.strippedShaOf.get(sha);
    if (!strippedSha) throw new Error(NOSCRIPT_MESSAGE);
    try {
      return (await this.client.evalsha(strippedSha, keys.length, ...keys, ...args.map(serializeArg))) as TData;
    } catch (error) {
      // Redis restarted or SCRIPT FLUSH: forget the mapping, the library retries with eval.
      if (String(error).includes('NOSCRIPT')) this.strippedShaOf.delete(sha);
      throw error;
    }
  }

  async eval<TArgs extends unknown[], TData = unknown>(script: string, keys: string[], args: TArgs): Promise<TData> {
    this.assertUsable();
    const stripped = stripLuaShebang(script);
    const result = await this.client.eval(stripped, keys.length, ...keys, ...args.map(serializeArg));
    this.strippedShaOf.set(scriptSha(script), scriptSha(stripped));
    return result as TData;
  }

  async get<TData>(key: string): Promise<TData | null> {
    this.assertUsable();
    return deserializeValue<TData>(await this.client.get(key));
  }

  async set<TData>(key: string, value: TData, options?: { px?: number }): Promise<'OK' | TData | null> {
    this.assertUsable();
    const stored = serializeArg(value);
    return (await (options?.px ? this.client.set(key, stored, 'PX', options.px) : this.client.set(key, stored))) as 'OK' | null;
  }

  /**
   * While ioredis waits to reconnect, a command would sit in its offline queue until the
   * next attempt (up to seconds) and then run late, counting a request that was already
   * served. Failing at once serves the request without delay instead.
   */
  private assertUsable() {
    const { status } = this.client;
    if (status === 'reconnecting' || status === 'close' || status === 'end') {
      throw new StoreUnavailableError(status);
    }
  }
}
