import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { createServer as createTcpServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  createFailureLog,
  createRateLimiter,
  createRedisTcpStore,
  createUpstashStore,
  type RateLimiter,
  type RateLimitStore,
} from '@/server/rate-limit';
import { createMemoryStore } from '@/server/rate-limit/stores/memory';
import { captureLogs } from '../helpers/logs';
import { policies, uniqueId } from './support';

/**
 * When the store is unreachable, silent or broken, requests are served (allowed,
 * degraded) within the timeout plus a small margin, nothing rejects, and the log gets at
 * most one line per 30 s.
 */

const TIMEOUT_MS = 300;
const MARGIN_MS = 250;

const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown) => unhandled.push(reason);

let closedPort: number;
let silentTcp: Server;
let silentHttp: HttpServer;
const silentSockets = new Set<Socket>();

beforeAll(async () => {
  process.on('unhandledRejection', onUnhandled);
  process.on('uncaughtException', onUnhandled);
  // A port that was free a moment ago: connecting to it is refused.
  const probe = createTcpServer();
  await listen(probe);
  closedPort = port(probe);
  await new Promise((resolve) => probe.close(resolve));
  // Accepts connections and never says a word (a hung Redis).
  silentTcp = createTcpServer((socket) => {
    silentSockets.add(socket);
    socket.on('close', () => silentSockets.delete(socket));
    socket.on('error', () => {});
  });
  await listen(silentTcp);
  // Accepts requests and never answers (a hung Upstash).
  silentHttp = createHttpServer(() => {});
  await listen(silentHttp);
});

afterAll(async () => {
  for (const socket of silentSockets) socket.destroy();
  silentHttp.closeAllConnections();
  await Promise.all([
    new Promise((resolve) => silentTcp.close(resolve)),
    new Promise((resolve) => silentHttp.close(resolve)),
  ]);
  process.off('unhandledRejection', onUnhandled);
  process.off('uncaughtException', onUnhandled);
});

describe('fail open', () => {
  const open: RateLimiter[] = [];
  const warnings: string[] = [];
  afterEach(async () => {
    await Promise.all(open.splice(0).map((l) => l.close()));
    warnings.length = 0;
  });

  function limiterOver(store: RateLimitStore) {
    const limiter = createRateLimiter({
      store,
      limits: policies(),
      timeoutMs: TIMEOUT_MS,
      failureLog: createFailureLog({ warn: (line) => warnings.push(line) }),
    });
    open.push(limiter);
    return limiter;
  }

  const redisAt = (url: string) =>
    createRedisTcpStore({ url, timeoutMs: TIMEOUT_MS, onConnectionError: (e) => connectionErrors.push(e) });
  const connectionErrors: unknown[] = [];

  const cases: [string, () => RateLimitStore][] = [
    ['Redis at a closed port', () => redisAt(`redis://127.0.0.1:${closedPort}`)],
    ['Redis that accepts and never answers', () => redisAt(`redis://127.0.0.1:${port(silentTcp)}`)],
    [
      'Upstash at a closed port',
      () => createUpstashStore({ url: `http://127.0.0.1:${closedPort}`, token: 't', timeoutMs: TIMEOUT_MS }),
    ],
    [
      'Upstash that never answers',
      () => createUpstashStore({ url: `http://127.0.0.1:${port(silentHttp)}`, token: 't', timeoutMs: TIMEOUT_MS }),
    ],
    ['a store whose calls throw', () => throwingStore()],
  ];

  it.each(cases)('%s: requests are allowed, degraded, within the timeout', async (_name, makeStore) => {
    const limiter = limiterOver(makeStore());
    const id = uniqueId('secret-looking-id');
    // A first burst (connection attempt in progress) and a second one (store known down).
    for (let round = 0; round < 2; round++) {
      const started = performance.now();
      const results = await Promise.all(Array.from({ length: 20 }, () => limiter.consume('general', id)));
      const elapsed = performance.now() - started;
      expect(elapsed).toBeLessThan(TIMEOUT_MS + MARGIN_MS);
      for (const result of results) {
        expect(result).toMatchObject({ allowed: true, degraded: true, limit: 60, remaining: 60, windowSeconds: 60 });
        expect(result.resetMs).toBeGreaterThan(Date.now());
      }
    }
    // 40 failures, one log line, no identifier in it.
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/^\[rate-limit\] .*requests are served without a limit/);
    expect(warnings[0]).not.toContain(id);
    expect(unhandled).toEqual([]);
  });

  it('the timeout bounds a store that answers too late', async () => {
    const slow = createMemoryStore();
    const realEval = slow.redis.eval.bind(slow.redis);
    slow.redis.evalsha = () => Promise.reject(new Error('NOSCRIPT No matching script'));
    slow.redis.eval = (async (...args: Parameters<typeof realEval>) => {
      await new Promise((resolve) => setTimeout(resolve, TIMEOUT_MS * 3));
      return realEval(...args);
    }) as typeof realEval;
    const limiter = limiterOver(slow);
    const started = performance.now();
    const result = await limiter.consume('export', uniqueId());
    expect(performance.now() - started).toBeLessThan(TIMEOUT_MS + MARGIN_MS);
    expect(result).toMatchObject({ allowed: true, degraded: true, limit: 10, windowSeconds: 3600 });
    expect(warnings[0]).toMatch(/did not answer within 300 ms/);
  });
});

describe('the failure log', () => {
  it('prints at most one line per 30 s, with the number of failures it left out', () => {
    let now = 0;
    const lines: string[] = [];
    const log = createFailureLog({ warn: (line) => lines.push(line), now: () => now });
    for (let i = 0; i < 100; i++) {
      log.failure('redis store call failed', new Error('connect ECONNREFUSED 127.0.0.1:6379'));
      now += 100;
    }
    expect(lines).toHaveLength(1);
    now = 30_000;
    log.failure('redis store call failed', new Error('still down'));
    expect(lines).toHaveLength(2);
    expect(lines[1]).toContain('+99 similar failures');
    log.success();
    expect(lines[2]).toBe('[rate-limit] store reachable again after 101 failures');
  });

  it('cuts the command (which holds identifiers) from @upstash/redis errors', () => {
    const lines: string[] = [];
    const log = createFailureLog({ warn: (line) => lines.push(line) });
    log.failure('upstash store call failed', new Error('ERR boom, command was: ["evalsha","x",2,"cda:k:key_123:1"]'));
    expect(lines[0]).toContain('ERR boom');
    expect(lines[0]).not.toContain('key_123');
  });

  it('the default writes one warning to the logger, with a stable message and the cause as a field', () => {
    const logs = captureLogs();
    try {
      createFailureLog().failure('x', new Error('y'));
      expect(logs.entries).toHaveLength(1);
      expect(logs.entries[0]).toMatchObject({ level: 'warn', msg: 'rate-limit store failed; requests are served without a limit', context: 'x', error: 'Error: y' });
    } finally {
      logs.restore();
    }
  });
});

/** A store whose every call throws, like a Redis client that rejects synchronously. */
function throwingStore(): RateLimitStore {
  const fail = () => Promise.reject(new Error('ECONNRESET'));
  return {
    kind: 'redis',
    redis: { evalsha: fail, eval: fail, get: fail, set: fail } as unknown as RateLimitStore['redis'],
    markers: { set: fail, has: fail },
    close: async () => {},
  };
}

function listen(server: Server | HttpServer): Promise<void> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
}

function port(server: Server | HttpServer): number {
  return (server.address() as AddressInfo).port;
}
