import { describe, expect, it } from 'vitest';
import { ConfigError, parseConfig, poolerOf } from '@/server/config';

/**
 * The database variables Vercel's integrations set: Neon's DATABASE_URL (pooled) and
 * DATABASE_URL_UNPOOLED, and the older Vercel Postgres names POSTGRES_URL and
 * POSTGRES_URL_NON_POOLING; and when the app takes DATABASE_URL to be a pooler.
 */

function problems(env: Record<string, string>): string[] {
  try {
    parseConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  return [];
}

const POOLED = 'postgres://u:p@ep-cool-name-123456-pooler.eu-central-1.aws.neon.tech/app';
const DIRECT = 'postgres://u:p@ep-cool-name-123456.eu-central-1.aws.neon.tech/app';

describe('database URLs', () => {
  it('reads the unpooled URL from DATABASE_URL_UNPOOLED, else POSTGRES_URL_NON_POOLING', () => {
    expect(parseConfig({ DATABASE_URL: POOLED, DATABASE_URL_UNPOOLED: DIRECT }).database.unpooledUrl).toBe(DIRECT);
    expect(parseConfig({ DATABASE_URL: POOLED, POSTGRES_URL_NON_POOLING: DIRECT }).database.unpooledUrl).toBe(DIRECT);
    expect(parseConfig({ DATABASE_URL: POOLED, DATABASE_URL_UNPOOLED: DIRECT, POSTGRES_URL_NON_POOLING: 'postgres://other/app' }).database.unpooledUrl).toBe(DIRECT);
    expect(parseConfig({ DATABASE_URL: POOLED }).database.unpooledUrl).toBeUndefined();
  });

  it('takes POSTGRES_URL (older Vercel Postgres) when DATABASE_URL is unset', () => {
    expect(parseConfig({ POSTGRES_URL: POOLED }).database.url).toBe(POOLED);
    expect(parseConfig({ DATABASE_URL: DIRECT, POSTGRES_URL: POOLED }).database.url).toBe(DIRECT);
    expect(problems({ VERCEL: '1', RATE_LIMIT_STORE: 'memory', POSTGRES_URL: POOLED, POSTGRES_URL_NON_POOLING: DIRECT })).toEqual([]);
  });

  it('refuses an unpooled URL without a pooled one, and names a malformed one', () => {
    expect(problems({ DATABASE_URL_UNPOOLED: DIRECT })).toEqual([expect.stringMatching(/^DATABASE_URL_UNPOOLED needs DATABASE_URL/)]);
    expect(problems({ POSTGRES_URL_NON_POOLING: DIRECT })).toEqual([expect.stringMatching(/^POSTGRES_URL_NON_POOLING needs DATABASE_URL/)]);
    expect(problems({ DATABASE_URL: POOLED, DATABASE_URL_UNPOOLED: 'mysql://x' })).toEqual(['DATABASE_URL_UNPOOLED must be a URL starting with postgres:// or postgresql://']);
  });

  it('takes DATABASE_URL to be a pooler with DATABASE_PREPARE=false, or by the provider’s host name', () => {
    expect(poolerOf(DIRECT, false)).toBe('DATABASE_PREPARE=false');
    expect(poolerOf(POOLED, true)).toMatch(/Neon/);
    expect(poolerOf('postgres://postgres.abc:p@aws-0-eu-central-1.pooler.supabase.com:6543/postgres', true)).toMatch(/Supabase/);
    expect(poolerOf(DIRECT, true)).toBeUndefined();
    expect(poolerOf('postgres://u@127.0.0.1:5432/app', true)).toBeUndefined();
    expect(parseConfig({ DATABASE_URL: POOLED }).database.pooler).toMatch(/Neon/);
    expect(parseConfig({ DATABASE_URL: DIRECT }).database.pooler).toBeUndefined();
    expect(parseConfig({}).database.pooler).toBeUndefined();
  });
});
