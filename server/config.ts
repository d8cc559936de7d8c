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

/** At most 10 proxies in a chain: a larger count is a typo, not a deployment. */
const MAX_PROXY_HOPS = 10;

const proxyHops = z
  .string()
  .trim()
  .regex(/^(0|[1-9][0-9]*)$/, `must be a whole number from 0 to ${MAX_PROXY_HOPS}`)
  .transform(Number)
  .refine((n) => n <= MAX_PROXY_HOPS, `must be a whole number from 0 to ${MAX_PROXY_HOPS}`)
  .optional();

// X-Forwarded-For is a list that clients can start (TRUSTED_PROXY_HOPS reads it from the
// end); Forwarded has its own syntax (for=…;proto=…). Neither is a single address.
const LIST_HEADERS = new Set(['x-forwarded-for', 'forwarded']);

const headerName = z
  .string()
  .trim()
  .toLowerCase()
  .regex(/^[a-z0-9!#$%&'*+.^_`|~-]+$/, 'must be an HTTP header name such as x-real-ip')
  .refine((h) => !LIST_HEADERS.has(h), 'must name a header holding one address; for X-Forwarded-For set TRUSTED_PROXY_HOPS instead')
  .optional();

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
  RATE_LIMIT_CALENDAR_PER_HOUR: positiveInt(60),
  RATE_LIMIT_AUTH_FAILURES_PER_MINUTE: positiveInt(30),
  RATE_LIMIT_TIMEOUT_MS: positiveInt(500),
  // Where the client address of the failed-authentication limit comes from (server/rest/client-address.ts).
  TRUSTED_PROXY_HOPS: proxyHops,
  CLIENT_ADDRESS_HEADER: headerName,
  // Set to 1 by Vercel on its builds and functions: its edge overwrites X-Real-IP.
  VERCEL: z.string().optional(),
  // Longest a REST request may take before it answers 503 (server/rest/deadline.ts).
  REQUEST_DEADLINE_MS: positiveInt(8000),
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
  if (c.TRUSTED_PROXY_HOPS !== undefined && c.CLIENT_ADDRESS_HEADER) {
    problems.push('CLIENT_ADDRESS_HEADER and TRUSTED_PROXY_HOPS are two ways to find the client address: set one of them');
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
      // Per calendar feed: calendar apps poll every few hours; a leaked address cannot
      // make the database read the owner's contracts more than this.
      calendar: { limit: c.RATE_LIMIT_CALENDAR_PER_HOUR, windowSeconds: 3600 },
      authFailures: { limit: c.RATE_LIMIT_AUTH_FAILURES_PER_MINUTE, windowSeconds: 60 },
      timeoutMs: c.RATE_LIMIT_TIMEOUT_MS,
    },
    clientAddress: clientAddressSource(c),
    requestDeadlineMs: c.REQUEST_DEADLINE_MS,
  };
}

/**
 * Where the client address comes from. Only a header that something in front of the app
 * writes on every request can be trusted: Next.js's own server keeps whatever
 * X-Forwarded-For and X-Real-IP the client sent (it only fills X-Forwarded-For in when
 * it is absent), so with no proxy configured there is no trustworthy address at all.
 */
export type ClientAddressSource =
  /** A header the platform or proxy overwrites on every request (X-Real-IP on Vercel). */
  | { from: 'header'; header: string }
  /** The entry `hops` places from the end of X-Forwarded-For, appended by the trusted proxies. */
  | { from: 'x-forwarded-for'; hops: number }
  /** Nothing trustworthy: every client shares one bucket. */
  | { from: 'none' };

function clientAddressSource(c: z.infer<typeof envSchema>): ClientAddressSource {
  if (c.CLIENT_ADDRESS_HEADER) return { from: 'header', header: c.CLIENT_ADDRESS_HEADER };
  if (c.TRUSTED_PROXY_HOPS !== undefined) {
    return c.TRUSTED_PROXY_HOPS > 0 ? { from: 'x-forwarded-for', hops: c.TRUSTED_PROXY_HOPS } : { from: 'none' };
  }
  if (c.VERCEL === '1') return { from: 'header', header: 'x-real-ip' };
  return { from: 'none' };
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
