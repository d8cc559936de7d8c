import { describe, expect, it } from 'vitest';
import { rateLimitHeaders, type RateLimitResult } from '@/server/rate-limit';

const now = 1_767_225_600_000; // 2026-01-01T00:00:00Z
const result = (over: Partial<RateLimitResult>): RateLimitResult => ({
  allowed: true,
  limit: 60,
  remaining: 12,
  resetMs: now + 36_400,
  windowSeconds: 60,
  degraded: false,
  ...over,
});

describe('rateLimitHeaders', () => {
  it('allowed: X-RateLimit-* and the draft-11 fields, no Retry-After', () => {
    expect(rateLimitHeaders(result({}), now, 'general')).toEqual({
      'X-RateLimit-Limit': '60',
      'X-RateLimit-Remaining': '12',
      'X-RateLimit-Reset': String(Math.ceil((now + 36_400) / 1000)),
      'RateLimit-Policy': '"general";q=60;w=60',
      RateLimit: '"general";r=12;t=37',
    });
  });

  it('denied: Retry-After in whole seconds from the reset, rounded up, never the raw milliseconds', () => {
    const headers = rateLimitHeaders(result({ allowed: false, remaining: 0 }), now);
    expect(headers['Retry-After']).toBe('37');
    expect(headers['X-RateLimit-Remaining']).toBe('0');
    expect(headers['RateLimit']).toBe('"default";r=0;t=37');
    expect(headers['X-RateLimit-Reset']).toBe('1767225637');
  });

  it('Retry-After is at least 1 even when the reset is now or already past', () => {
    for (const resetMs of [now, now - 5_000, now + 1]) {
      const headers = rateLimitHeaders(result({ allowed: false, remaining: 0, resetMs }), now);
      expect(headers['Retry-After']).toBe('1');
    }
    expect(rateLimitHeaders(result({ allowed: false, resetMs: now - 5_000 }), now)['RateLimit']).toContain(';t=0');
  });

  it('never shows a negative remaining', () => {
    expect(rateLimitHeaders(result({ remaining: -3 }), now)['X-RateLimit-Remaining']).toBe('0');
  });

  it('quotes the policy name as a Structured Field string', () => {
    expect(rateLimitHeaders(result({}), now, 'a"b\\c')['RateLimit-Policy']).toBe('"a\\"b\\\\c";q=60;w=60');
  });

  it('uses the current time by default', () => {
    const headers = rateLimitHeaders(result({ allowed: false, resetMs: Date.now() + 10_000 }));
    expect(Number(headers['Retry-After'])).toBeGreaterThanOrEqual(9);
    expect(Number(headers['Retry-After'])).toBeLessThanOrEqual(10);
  });
});
