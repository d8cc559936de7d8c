import { describe, expect, it } from 'vitest';
import { ConfigError, parseConfig } from '@/server/config';

function problems(env: Record<string, string>): string[] {
  try {
    parseConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  return [];
}

describe('configuration', () => {
  it('has working defaults with nothing set: embedded database, in-process limits, the spec limits', () => {
    const c = parseConfig({});
    expect(c.database.url).toBeUndefined();
    expect(c.database.pgliteDir).toMatch(/\.data\/pglite$/);
    expect(c.rateLimit.upstash).toBeUndefined();
    expect(c.rateLimit.redisUrl).toBeUndefined();
    expect(c.rateLimit.general).toEqual({ limit: 60, windowSeconds: 60 });
    expect(c.rateLimit.export).toEqual({ limit: 10, windowSeconds: 3600 });
    expect(c.auth.github).toBeUndefined();
  });

  it('names the variable and says what is wrong', () => {
    expect(problems({ DATABASE_URL: 'mysql://x' })).toEqual(['DATABASE_URL must be a URL starting with postgres:// or postgresql://']);
    expect(problems({ RATE_LIMIT_GENERAL_PER_WINDOW: 'sixty' })).toEqual(['RATE_LIMIT_GENERAL_PER_WINDOW must be a positive whole number']);
    expect(problems({ DATABASE_PREPARE: 'yes' })).toEqual(['DATABASE_PREPARE must be true or false']);
    expect(problems({ AUTH_SECRET: 'short' })[0]).toMatch(/^AUTH_SECRET must be at least 32 characters/);
    expect(problems({ REDIS_URL: 'http://localhost' })[0]).toMatch(/^REDIS_URL must be a URL starting with redis:\/\//);
  });

  it('requires AUTH_SECRET in production only', () => {
    expect(problems({ NODE_ENV: 'production' })[0]).toMatch(/^AUTH_SECRET is required in production/);
    expect(problems({ NODE_ENV: 'production', AUTH_SECRET: 'x'.repeat(32) })).toEqual([]);
  });

  it('switches GitHub sign-in and Upstash on only when both of their variables are set', () => {
    expect(parseConfig({ AUTH_GITHUB_ID: 'id', AUTH_GITHUB_SECRET: 'secret' }).auth.github).toEqual({ clientId: 'id', clientSecret: 'secret' });
    expect(problems({ AUTH_GITHUB_ID: 'id' })).toEqual(['AUTH_GITHUB_ID and AUTH_GITHUB_SECRET must be set together (or neither)']);
    expect(problems({ UPSTASH_REDIS_REST_URL: 'https://x.upstash.io' })[0]).toMatch(/UPSTASH_REDIS_REST_TOKEN/);
    expect(parseConfig({ UPSTASH_REDIS_REST_URL: 'https://x.upstash.io', UPSTASH_REDIS_REST_TOKEN: 't' }).rateLimit.upstash).toBeDefined();
  });

  describe('on Vercel (VERCEL=1), where every request may land on another instance', () => {
    const vercel = { VERCEL: '1', DATABASE_URL: 'postgres://u@db.example/app' };

    it('stops at start without a shared rate-limit store, naming both Upstash variable names', () => {
      const [problem] = problems(vercel);
      expect(problem).toMatch(/UPSTASH_REDIS_REST_URL/);
      expect(problem).toMatch(/KV_REST_API_URL/);
      expect(problem).toMatch(/RATE_LIMIT_STORE=memory/);
    });

    it("accepts Upstash under either pair of names (the integration's KV_REST_API_*), REDIS_URL, or memory on purpose", () => {
      expect(parseConfig({ ...vercel, KV_REST_API_URL: 'https://kv.upstash.io', KV_REST_API_TOKEN: 't' }).rateLimit.upstash).toEqual({ url: 'https://kv.upstash.io', token: 't' });
      expect(parseConfig({ ...vercel, UPSTASH_REDIS_REST_URL: 'https://u.upstash.io', UPSTASH_REDIS_REST_TOKEN: 'a', KV_REST_API_URL: 'https://kv.upstash.io', KV_REST_API_TOKEN: 'b' }).rateLimit.upstash).toEqual({
        url: 'https://u.upstash.io',
        token: 'a',
      });
      expect(parseConfig({ ...vercel, REDIS_URL: 'redis://r.example:6379' }).rateLimit.redisUrl).toBe('redis://r.example:6379');
      const memory = parseConfig({ ...vercel, RATE_LIMIT_STORE: 'memory', REDIS_URL: 'redis://r.example:6379' });
      expect(memory.rateLimit.redisUrl).toBeUndefined();
      expect(memory.rateLimit.upstash).toBeUndefined();
      expect(problems({ KV_REST_API_URL: 'https://kv.upstash.io' })).toEqual(['KV_REST_API_URL and KV_REST_API_TOKEN must be set together (or neither)']);
    });

    it('stops at start without DATABASE_URL (an embedded database would lose its data there)', () => {
      expect(problems({ VERCEL: '1', RATE_LIMIT_STORE: 'memory' })).toEqual([expect.stringMatching(/^On Vercel DATABASE_URL is required/)]);
    });
  });

  it('takes a read replica only with a primary', () => {
    expect(problems({ DATABASE_REPLICA_URL: 'postgres://u@replica/app' })).toEqual([expect.stringMatching(/^DATABASE_REPLICA_URL needs DATABASE_URL/)]);
    const c = parseConfig({ DATABASE_URL: 'postgres://u@primary/app', DATABASE_REPLICA_URL: 'postgres://u@replica/app' });
    expect(c.database.replicaUrl).toBe('postgres://u@replica/app');
    expect(c.database.replicaMaxLagMs).toBe(2000);
  });
});
