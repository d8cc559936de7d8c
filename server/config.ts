import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';

/**
 * Every environment variable the app reads, validated once. A wrong value stops the
 * process with a message that names the variable and says what is expected, instead
 * of failing later in some request.
 */

const positiveInt = (fallback: number) =>
  z
    .string()
    .trim()
    .regex(/^[1-9][0-9]*$/, 'must be a positive whole number')
    .transform(Number)
    .optional()
    .transform((v) => v ?? fallback);

const flag = (fallback: boolean) =>
  z
    .enum(['true', 'false', '1', '0'], { message: 'must be true or false' })
    .optional()
    .transform((v) => (v === undefined ? fallback : v === 'true' || v === '1'));

const url = (schemes: string[]) =>
  z
    .string()
    .trim()
    .refine((v) => {
      try {
        return schemes.includes(new URL(v).protocol);
      } catch {
        return false;
      }
    }, `must be a URL starting with ${schemes.map((s) => `${s}//`).join(' or ')}`)
    .optional();

const optionalString = z
  .string()
  .trim()
  .optional()
  .transform((v) => (v ? v : undefined));

const envSchema = z.object({
  NODE_ENV: z.enum(['development', 'production', 'test']).optional().default('development'),
  DATABASE_URL: url(['postgres:', 'postgresql:']),
  DATABASE_POOL_MAX: positiveInt(10),
  // Transaction-mode poolers (PgBouncer < 1.21, some managed poolers) lose named
  // prepared statements between transactions: set to false behind them.
  DATABASE_PREPARE: flag(true),
  // Upper bound of one SQL statement, so that a stuck query becomes a clear error.
  DATABASE_STATEMENT_TIMEOUT_MS: positiveInt(5000),
  PGLITE_DIR: optionalString,
  AUTH_SECRET: optionalString.refine((v) => v === undefined || v.length >= 32, {
    message: 'must be at least 32 characters (generate one with: openssl rand -base64 32)',
  }),
  AUTH_GITHUB_ID: optionalString,
  AUTH_GITHUB_SECRET: optionalString,
  UPSTASH_REDIS_REST_URL: url(['https:', 'http:']),
  UPSTASH_REDIS_REST_TOKEN: optionalString,
  REDIS_URL: url(['redis:', 'rediss:']),
  RATE_LIMIT_GENERAL_PER_WINDOW: positiveInt(60),
  RATE_LIMIT_GENERAL_WINDOW_SECONDS: positiveInt(60),
  RATE_LIMIT_EXPORT_PER_WINDOW: positiveInt(10),
  RATE_LIMIT_EXPORT_WINDOW_SECONDS: positiveInt(3600),
  RATE_LIMIT_AUTH_FAILURES_PER_MINUTE: positiveInt(30),
  RATE_LIMIT_TIMEOUT_MS: positiveInt(500),
});

export type Config = ReturnType<typeof parseConfig>;

export class ConfigError extends Error {
  constructor(public readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

export function parseConfig(env: Record<string, string | undefined>) {
  const parsed = envSchema.safeParse(env);
  if (!parsed.success) {
    throw new ConfigError(
      parsed.error.issues.map((issue) => `${issue.path.join('.')} ${issue.message}`),
    );
  }
  const c = parsed.data;
  const problems: string[] = [];
  if (Boolean(c.AUTH_GITHUB_ID) !== Boolean(c.AUTH_GITHUB_SECRET)) {
    problems.push('AUTH_GITHUB_ID and AUTH_GITHUB_SECRET must be set together (or neither)');
  }
  if (Boolean(c.UPSTASH_REDIS_REST_URL) !== Boolean(c.UPSTASH_REDIS_REST_TOKEN)) {
    problems.push('UPSTASH_REDIS_REST_URL and UPSTASH_REDIS_REST_TOKEN must be set together (or neither)');
  }
  if (c.NODE_ENV === 'production' && !c.AUTH_SECRET) {
    problems.push(
      'AUTH_SECRET is required in production (generate one with: openssl rand -base64 32)',
    );
  }
  if (problems.length > 0) throw new ConfigError(problems);

  return {
    nodeEnv: c.NODE_ENV,
    database: {
      url: c.DATABASE_URL,
      poolMax: c.DATABASE_POOL_MAX,
      prepare: c.DATABASE_PREPARE,
      statementTimeoutMs: c.DATABASE_STATEMENT_TIMEOUT_MS,
      pgliteDir: path.resolve(/*turbopackIgnore: true*/ c.PGLITE_DIR ?? path.join(dataDir(), 'pglite')),
    },
    auth: {
      secret: c.AUTH_SECRET,
      github:
        c.AUTH_GITHUB_ID && c.AUTH_GITHUB_SECRET
          ? { clientId: c.AUTH_GITHUB_ID, clientSecret: c.AUTH_GITHUB_SECRET }
          : undefined,
    },
    rateLimit: {
      upstash:
        c.UPSTASH_REDIS_REST_URL && c.UPSTASH_REDIS_REST_TOKEN
          ? { url: c.UPSTASH_REDIS_REST_URL, token: c.UPSTASH_REDIS_REST_TOKEN }
          : undefined,
      redisUrl: c.REDIS_URL,
      general: {
        limit: c.RATE_LIMIT_GENERAL_PER_WINDOW,
        windowSeconds: c.RATE_LIMIT_GENERAL_WINDOW_SECONDS,
      },
      export: {
        limit: c.RATE_LIMIT_EXPORT_PER_WINDOW,
        windowSeconds: c.RATE_LIMIT_EXPORT_WINDOW_SECONDS,
      },
      authFailures: { limit: c.RATE_LIMIT_AUTH_FAILURES_PER_MINUTE, windowSeconds: 60 },
      timeoutMs: c.RATE_LIMIT_TIMEOUT_MS,
    },
  };
}

/** Where the embedded database and generated development secrets live (git-ignored). */
export function dataDir(): string {
  return path.join(/*turbopackIgnore: true*/ process.cwd(), '.data');
}

let cached: Config | undefined;

/** The process's configuration, parsed on first use. */
export function config(): Config {
  cached ??= parseConfig(process.env);
  return cached;
}

/**
 * The secret that signs session cookies. Production requires AUTH_SECRET; in
 * development one is generated once and kept under .data/ so sessions survive restarts.
 */
export function authSecret(): string {
  const configured = config().auth.secret;
  if (configured) return configured;
  const file = path.join(dataDir(), 'auth-secret');
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  mkdirSync(dataDir(), { recursive: true });
  const secret = randomBytes(32).toString('base64url');
  writeFileSync(file, secret, { mode: 0o600 });
  return secret;
}
