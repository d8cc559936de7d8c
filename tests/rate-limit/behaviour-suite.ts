import { afterEach, describe, expect, it } from 'vitest';
import {
  createRateLimiter,
  rateLimitHeaders,
  type BucketPolicies,
  type RateLimiter,
  type RateLimitResult,
  type RateLimitStore,
} from '@/server/rate-limit';
import { policies, timeInWindow, uniqueId, uniquePrefix, controlDate } from './support';

/**
 * The behaviour every store must show. Each *.test.ts file runs it against one store
 * (memory, Redis over TCP, Upstash REST through the test proxy).
 */
export function behaviourSuite(kind: string, makeStore: () => RateLimitStore) {
  describe(`rate limits over the ${kind} store`, () => {
    const open: RateLimiter[] = [];
    const clocks: { restore(): void }[] = [];

    function limiter(limits: BucketPolicies = policies()): RateLimiter {
      // A generous timeout: these tests are about limits, a degraded answer is a failure.
      const created = createRateLimiter({ store: makeStore(), limits, timeoutMs: 3_000, prefix: uniquePrefix(kind) });
      open.push(created);
      return created;
    }
    function fakeDate(startMs: number) {
      const clock = controlDate(startMs);
      clocks.push(clock);
      return clock;
    }

    /**
     * Pins Date half-way into a minute and 6.5 minutes into an hour, so that no window
     * boundary of the default policies passes during a test: across a boundary the
     * sliding window legitimately lets one more request through, which would make exact
     * counts flaky. Atomicity is the store's job and does not depend on the clock.
     */
    function pinMidWindow() {
      fakeDate(timeInWindow(3_600_000, 390 / 3600));
    }

    afterEach(async () => {
      clocks.splice(0).forEach((clock) => clock.restore());
      await Promise.all(open.splice(0).map((l) => l.close()));
    });

    it('is exact under concurrency: 100 simultaneous requests, limit 60 -> 60 allowed, 40 denied', async () => {
      pinMidWindow();
      const rl = limiter();
      const id = uniqueId('key');
      const results = await Promise.all(Array.from({ length: 100 }, () => rl.consume('general', id)));
      expect(results.filter((r) => r.degraded)).toHaveLength(0);
      expect(results.filter((r) => r.allowed)).toHaveLength(60);
      expect(results.filter((r) => !r.allowed)).toHaveLength(40);
      // Each allowed request saw a distinct count: remaining 59..0 exactly once each.
      const remainings = results.filter((r) => r.allowed).map((r) => r.remaining).sort((a, b) => a - b);
      expect(remainings).toEqual(Array.from({ length: 60 }, (_, i) => i));
      expect(results.filter((r) => !r.allowed).every((r) => r.remaining === 0)).toBe(true);
    });

    it('keeps buckets independent: 11 exports -> the 11th is denied, a list request still passes', async () => {
      pinMidWindow();
      const rl = limiter();
      const id = uniqueId('key');
      const exports: RateLimitResult[] = [];
      for (let i = 0; i < 11; i++) exports.push(await rl.consume('export', id));
      expect(exports.map((r) => r.allowed)).toEqual([...Array<boolean>(10).fill(true), false]);
      expect(exports.map((r) => r.remaining)).toEqual([9, 8, 7, 6, 5, 4, 3, 2, 1, 0, 0]);

      const general = await rl.consume('general', id);
      expect(general).toMatchObject({ allowed: true, limit: 60, remaining: 59, degraded: false });
      const authFailure = await rl.consume('auth_failure', id);
      expect(authFailure).toMatchObject({ allowed: true, limit: 30, remaining: 29 });
    });

    it('a request denied in one bucket uses nothing of another', async () => {
      pinMidWindow();
      const rl = limiter(policies({ general: { limit: 3, windowSeconds: 60 }, export: { limit: 3, windowSeconds: 60 } }));
      const id = uniqueId('key');
      for (let i = 0; i < 3; i++) expect((await rl.consume('general', id)).allowed).toBe(true);
      for (let i = 0; i < 5; i++) expect((await rl.consume('general', id)).allowed).toBe(false);
      expect(await rl.consume('export', id)).toMatchObject({ allowed: true, remaining: 2 });
      expect(await rl.consume('export', id)).toMatchObject({ allowed: true, remaining: 1 });
      expect(await rl.consume('export', id)).toMatchObject({ allowed: true, remaining: 0 });
      expect(await rl.consume('export', id)).toMatchObject({ allowed: false, remaining: 0 });
      expect(await rl.consume('auth_failure', id)).toMatchObject({ allowed: true, remaining: 29 });
    });

    it('keeps identifiers independent', async () => {
      pinMidWindow();
      const rl = limiter(policies({ general: { limit: 2, windowSeconds: 60 } }));
      const [a, b] = [uniqueId('a'), uniqueId('b')];
      await rl.consume('general', a);
      await rl.consume('general', a);
      expect((await rl.consume('general', a)).allowed).toBe(false);
      expect(await rl.consume('general', b)).toMatchObject({ allowed: true, remaining: 1 });
    });

    it('gives headers consistent with each other and with the window', async () => {
      const windowSeconds = 20;
      // Pinned 25% into a window: no window boundary can pass between the calls.
      const clock = fakeDate(timeInWindow(windowSeconds * 1000, 0.25));
      const rl = limiter(policies({ general: { limit: 5, windowSeconds } }));
      const id = uniqueId('key');
      const seen: Record<string, string>[] = [];
      for (let i = 0; i < 6; i++) {
        const result = await rl.consume('general', id);
        expect(result.degraded).toBe(false);
        seen.push(rateLimitHeaders(result, clock.now(), 'general'));
      }
      const now = clock.now();
      const windowEnd = Math.ceil(now / (windowSeconds * 1000)) * windowSeconds * 1000;
      expect(seen.map((h) => h['X-RateLimit-Limit'])).toEqual(Array(6).fill('5'));
      expect(seen.map((h) => h['X-RateLimit-Remaining'])).toEqual(['4', '3', '2', '1', '0', '0']);
      for (const h of seen) {
        const reset = Number(h['X-RateLimit-Reset']);
        // Unix seconds (not ms), in the future, no further than one window away.
        expect(reset).toBe(windowEnd / 1000);
        expect(reset).toBeGreaterThan(now / 1000);
        expect(reset).toBeLessThanOrEqual(now / 1000 + windowSeconds);
        expect(h['RateLimit-Policy']).toBe(`"general";q=5;w=${windowSeconds}`);
        expect(h['RateLimit']).toBe(`"general";r=${h['X-RateLimit-Remaining']};t=15`);
      }
      expect(seen.slice(0, 5).every((h) => !('Retry-After' in h))).toBe(true);
      const denied = seen[5]!;
      // 75% of a 20 s window left: 15 s, derived from the reset, within [1, window].
      expect(denied['Retry-After']).toBe('15');
      expect(Number(denied['Retry-After'])).toBe(Math.ceil((windowEnd - now) / 1000));
    });

    it('slides: the previous window counts in proportion to its overlap', async () => {
      const windowMs = 10_000;
      const clock = fakeDate(timeInWindow(windowMs, 0));
      const rl = limiter(policies({ general: { limit: 5, windowSeconds: windowMs / 1000 } }));
      const id = uniqueId('key');
      for (let i = 0; i < 5; i++) expect((await rl.consume('general', id)).allowed).toBe(true);
      const denied = await rl.consume('general', id);
      expect(denied).toMatchObject({ allowed: false, remaining: 0, resetMs: clock.now() + windowMs });

      // 40% into the next window, 60% of the previous 5 still count: floor(3) -> 2 left.
      clock.advance(windowMs * 1.4);
      expect(await rl.consume('general', id)).toMatchObject({ allowed: true, remaining: 1 });
      expect(await rl.consume('general', id)).toMatchObject({ allowed: true, remaining: 0 });
      expect(await rl.consume('general', id)).toMatchObject({ allowed: false, remaining: 0 });

      // Two windows later nothing counts any more.
      clock.advance(windowMs * 2);
      const fresh = await rl.consume('general', id);
      expect(fresh).toMatchObject({ allowed: true, remaining: 4, degraded: false });
    });

    it('allows again once the window has passed (real time, 2 s window)', async () => {
      const rl = limiter(policies({ general: { limit: 5, windowSeconds: 2 } }));
      const id = uniqueId('key');
      // Start in the first three quarters of a window, so the burst stays inside one.
      const intoWindow = Date.now() % 2_000;
      if (intoWindow > 1_500) await sleep(2_000 - intoWindow + 10);
      const results: RateLimitResult[] = [];
      for (let i = 0; i < 6; i++) results.push(await rl.consume('general', id));
      expect(results.map((r) => r.allowed)).toEqual([true, true, true, true, true, false]);
      const denied = results[5]!;
      const retryAfter = Number(rateLimitHeaders(denied)['Retry-After']);
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(2);
      await sleep(denied.resetMs - Date.now() + 50);
      expect(await rl.consume('general', id)).toMatchObject({ allowed: true, degraded: false });
    });
  });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));
