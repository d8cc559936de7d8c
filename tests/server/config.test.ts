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
});
