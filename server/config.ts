import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { DEFAULT_EVENTS_RETENTION_DAYS } from '../lib/events';

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

/** pino's levels, and silent (nothing at all). */
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

// The logger's two variables, also parsed on their own by logSettings(): the logger must
// work (and name a wrong value) even before, or without, the rest of the configuration.
const logSchema = z.object({
  LOG_LEVEL: z
    .string()
    .trim()
    .toLowerCase()
    .pipe(z.enum(LOG_LEVELS, { message: `must be one of ${LOG_LEVELS.join(', ')}` }))
    .optional()
    .transform((v) => v ?? 'info'),
  // pretty: coloured lines for a terminal (the default under `npm run dev`, scripts/dev.ts).
  LOG_FORMAT: z
    .string()
    .trim()
    .toLowerCase()
    .pipe(z.enum(['json', 'pretty'], { message: 'must be json or pretty' }))
    .optional()
    .transform((v) => v ?? 'json'),
});

export type LogSettings = { level: (typeof LOG_LEVELS)[number]; format: 'json' | 'pretty' };

/** LOG_LEVEL and LOG_FORMAT alone; a wrong value throws the ConfigError naming the variable. */
export function logSettings(env: Record<string, string | undefined>): LogSettings {
  const parsed = logSchema.safeParse(env);
  if (!parsed.success) throw new ConfigError(parsed.error.issues.map((issue) => `${issue.path.join('.')} ${issue.message}`));
  return { level: parsed.data.LOG_LEVEL, format: parsed.data.LOG_FORMAT };
}

const envSchema = logSchema.extend({
  NODE_ENV: z.enum(['development', 'production', 'test']).optional().default('development'),
  DATABASE_URL: url(['postgres:', 'postgresql:']),
  // The same database without the pooler in between (Neon's name through Vercel's
  // integration), else POSTGRES_URL_NON_POOLING (the older Vercel Postgres name): for what a
  // transaction pooler cannot carry (LISTEN, migrations). POSTGRES_URL is the older pooled
  // name, read when DATABASE_URL is unset.
  DATABASE_URL_UNPOOLED: url(['postgres:', 'postgresql:']),
  POSTGRES_URL_NON_POOLING: url(['postgres:', 'postgresql:']),
  POSTGRES_URL: url(['postgres:', 'postgresql:']),
  DATABASE_POOL_MAX: positiveInt(10),
  // Transaction-mode poolers (PgBouncer < 1.21, some managed poolers) lose named
  // prepared statements between transactions: set to false behind them.
  DATABASE_PREPARE: flag(true),
  // Upper bound of one SQL statement, so that a stuck query becomes a clear error.
  DATABASE_STATEMENT_TIMEOUT_MS: positiveInt(5000),
  // A streaming read replica for lists, get-one and exports (server/database.ts).
  DATABASE_REPLICA_URL: url(['postgres:', 'postgresql:']),
  // How far behind the primary the replica may be before reads go to the primary.
  DATABASE_REPLICA_MAX_LAG_MS: positiveInt(2000),
  PGLITE_DIR: optionalString,
  AUTH_SECRET: optionalString.refine((v) => v === undefined || v.length >= 32, {
    message: 'must be at least 32 characters (generate one with: openssl rand -base64 32)',
  }),
  // The app's public URL: every absolute URL it writes uses this origin (server/http/public-origin.ts); next-auth reads it too.
  AUTH_URL: url(['https:', 'http:']),
  AUTH_GITHUB_ID: optionalString,
  AUTH_GITHUB_SECRET: optionalString,
  UPSTASH_REDIS_REST_URL: url(['https:', 'http:']),
  UPSTASH_REDIS_REST_TOKEN: optionalString,
  // The names Vercel's Upstash integration sets (the same pair, read when the above are unset).
  KV_REST_API_URL: url(['https:', 'http:']),
  KV_REST_API_TOKEN: optionalString,
  // "memory": count limits in this process on purpose, even on Vercel (one instance only).
  RATE_LIMIT_STORE: z.enum(['memory'], { message: 'must be memory (or unset: Upstash or Redis when configured, else memory)' }).optional(),
  REDIS_URL: url(['redis:', 'rediss:']),
  RATE_LIMIT_GENERAL_PER_WINDOW: positiveInt(60),
  RATE_LIMIT_GENERAL_WINDOW_SECONDS: positiveInt(60),
  // Conditional requests (If-None-Match) per key and general window; unset: 10 x the general limit.
  RATE_LIMIT_CONDITIONAL_PER_WINDOW: positiveInt(0),
  RATE_LIMIT_EXPORT_PER_WINDOW: positiveInt(10),
  RATE_LIMIT_EXPORT_WINDOW_SECONDS: positiveInt(3600),
  RATE_LIMIT_CALENDAR_PER_HOUR: positiveInt(60),
  RATE_LIMIT_AUTH_FAILURES_PER_MINUTE: positiveInt(30),
  // Failed password sign-ins (and sign-ups) per client address, and failed sign-ins per
  // account (server/auth/sign-in-limit.ts).
  RATE_LIMIT_SIGN_IN_ADDRESS_PER_WINDOW: positiveInt(10),
  RATE_LIMIT_SIGN_IN_ADDRESS_WINDOW_SECONDS: positiveInt(60),
  RATE_LIMIT_SIGN_IN_ACCOUNT_PER_WINDOW: positiveInt(10),
  RATE_LIMIT_SIGN_IN_ACCOUNT_WINDOW_SECONDS: positiveInt(900),
  // "Forgot password?" requests per client address, and e-mails about one account (sign-up
  // verifications, sign-up attempts, reset links) per account, per hour (server/auth/account-limits.ts).
  RATE_LIMIT_PASSWORD_RESET_PER_HOUR: positiveInt(10),
  RATE_LIMIT_ACCOUNT_MAIL_PER_HOUR: positiveInt(5),
  RATE_LIMIT_TIMEOUT_MS: positiveInt(500),
  // Where the client address of the failed-authentication limit comes from (server/http/client-address.ts).
  TRUSTED_PROXY_HOPS: proxyHops,
  CLIENT_ADDRESS_HEADER: headerName,
  // Set to 1 by Vercel on its builds and functions: its edge overwrites X-Real-IP.
  VERCEL: z.string().optional(),
  // production, preview or development on Vercel (migrations run for production only).
  VERCEL_ENV: z.string().optional(),
  // Longest a REST request may take before it answers 503 (server/http/deadline.ts).
  REQUEST_DEADLINE_MS: positiveInt(8000),
  // Webhooks (server/webhooks/): the in-process worker of `next start` (off on Vercel, where
  // the cron route drains the queue), private and plain-http receivers (development and
  // tests), the key that encrypts signing secrets, and the bearer secret of the cron route.
  WEBHOOK_WORKER: z.enum(['on', 'off'], { message: 'must be on or off' }).optional(),
  WEBHOOK_ALLOW_PRIVATE_URLS: flag(false),
  WEBHOOK_ENCRYPTION_KEY: optionalString.refine((v) => v === undefined || v.length >= 32, {
    message: 'must be at least 32 characters (generate one with: openssl rand -base64 32)',
  }),
  CRON_SECRET: optionalString.refine((v) => v === undefined || v.length >= 16, {
    message: 'must be at least 16 characters (generate one with: openssl rand -base64 32)',
  }),
  // The bearer token of GET /api/metrics (server/observability/): without it the route does
  // not exist. Long enough that guessing it is hopeless even past the failed-attempt limit.
  METRICS_TOKEN: optionalString.refine((v) => v === undefined || v.length >= 32, {
    message: 'must be at least 32 characters (generate one with: openssl rand -base64 32)',
  }),
  // "off": no metrics recorded (and no /api/metrics): the bench's switch to measure what
  // observability costs, side by side with "on" (docs/operations.md).
  OBSERVABILITY: z.enum(['on', 'off'], { message: 'must be on or off' }).optional(),
  // Mail (server/mail/): SMTP_URL (smtp://user:pass@host:587 or smtps://…) and MAIL_FROM to
  // send; without SMTP_URL, development logs each message and writes it to .data/mail/, and
  // production refuses to start unless MAIL_TRANSPORT=log (server/mail/settings.ts).
  SMTP_URL: url(['smtp:', 'smtps:']),
  MAIL_FROM: optionalString.refine((v) => v === undefined || /^[^\r\n]{1,320}$/.test(v), { message: 'must be one address, such as "Contract Data API <no-reply@example.com>"' }),
  MAIL_TRANSPORT: z.enum(['smtp', 'log'], { message: 'must be smtp or log' }).optional(),
  // Per-key usage counts and the request log (server/usage/): "off" records neither, the
  // bench's baseline to measure what they cost, side by side with "on".
  KEY_ACTIVITY: z.enum(['on', 'off'], { message: 'must be on or off' }).optional(),
  // Days a security-log event is kept (server/security-log/): the retention job deletes older ones.
  AUDIT_LOG_RETENTION_DAYS: positiveInt(400),
  // Days the event list (GET /api/v1/events) keeps an event; older cursors answer 410.
  EVENTS_RETENTION_DAYS: positiveInt(DEFAULT_EVENTS_RETENTION_DAYS),
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
  const databaseUrl = c.DATABASE_URL ?? c.POSTGRES_URL;
  if (Boolean(c.AUTH_GITHUB_ID) !== Boolean(c.AUTH_GITHUB_SECRET)) {
    problems.push('AUTH_GITHUB_ID and AUTH_GITHUB_SECRET must be set together (or neither)');
  }
  if (Boolean(c.UPSTASH_REDIS_REST_URL) !== Boolean(c.UPSTASH_REDIS_REST_TOKEN)) {
    problems.push('UPSTASH_REDIS_REST_URL and UPSTASH_REDIS_REST_TOKEN must be set together (or neither)');
  }
  if (Boolean(c.KV_REST_API_URL) !== Boolean(c.KV_REST_API_TOKEN)) {
    problems.push('KV_REST_API_URL and KV_REST_API_TOKEN must be set together (or neither)');
  }
  if ((c.DATABASE_URL_UNPOOLED || c.POSTGRES_URL_NON_POOLING) && !databaseUrl) {
    const name = c.DATABASE_URL_UNPOOLED ? 'DATABASE_URL_UNPOOLED' : 'POSTGRES_URL_NON_POOLING';
    problems.push(`${name} needs DATABASE_URL: it is the same database without the pooler, for LISTEN and migrations; the app's queries go to DATABASE_URL`);
  }
  if (c.DATABASE_REPLICA_URL && !databaseUrl) {
    problems.push('DATABASE_REPLICA_URL needs DATABASE_URL: the replica only serves reads, the primary the rest');
  }
  const upstash = upstashOf(c);
  if (c.VERCEL === '1') {
    // Every request may land on another instance there: limits counted in one instance's
    // memory would let each instance allow its own quota, and an embedded database on a
    // serverless file system loses its data.
    if (!upstash && !c.REDIS_URL && c.RATE_LIMIT_STORE !== 'memory') {
      problems.push(
        'On Vercel the rate limits need a shared store: set UPSTASH_REDIS_REST_URL and UPSTASH_REDIS_REST_TOKEN (or KV_REST_API_URL and KV_REST_API_TOKEN, as the Upstash integration names them), or REDIS_URL; RATE_LIMIT_STORE=memory counts per instance on purpose',
      );
    }
    if (!databaseUrl) problems.push('On Vercel DATABASE_URL is required: the embedded database would live on a serverless file system and lose its data');
  }
  if (c.TRUSTED_PROXY_HOPS !== undefined && c.CLIENT_ADDRESS_HEADER) {
    problems.push('CLIENT_ADDRESS_HEADER and TRUSTED_PROXY_HOPS are two ways to find the client address: set one of them');
  }
  if (c.SMTP_URL && !c.MAIL_FROM) problems.push('MAIL_FROM is required with SMTP_URL: the address messages are sent from, such as "Contract Data API <no-reply@example.com>"');
  if (c.MAIL_TRANSPORT === 'smtp' && !c.SMTP_URL) problems.push('MAIL_TRANSPORT=smtp needs SMTP_URL (smtp://user:pass@host:587 or smtps://…) and MAIL_FROM');
  if (c.NODE_ENV === 'production' && !c.AUTH_SECRET) {
    problems.push(
      'AUTH_SECRET is required in production (generate one with: openssl rand -base64 32)',
    );
  }
  if (problems.length > 0) throw new ConfigError(problems);

  return {
    nodeEnv: c.NODE_ENV,
    log: { level: c.LOG_LEVEL, format: c.LOG_FORMAT } satisfies LogSettings,
    database: {
      url: databaseUrl,
      unpooledUrl: c.DATABASE_URL_UNPOOLED ?? c.POSTGRES_URL_NON_POOLING,
      poolMax: c.DATABASE_POOL_MAX,
      prepare: c.DATABASE_PREPARE,
      pooler: databaseUrl ? poolerOf(databaseUrl, c.DATABASE_PREPARE) : undefined,
      statementTimeoutMs: c.DATABASE_STATEMENT_TIMEOUT_MS,
      replicaUrl: c.DATABASE_REPLICA_URL,
      replicaMaxLagMs: c.DATABASE_REPLICA_MAX_LAG_MS,
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
      upstash: c.RATE_LIMIT_STORE === 'memory' ? undefined : upstash,
      redisUrl: c.RATE_LIMIT_STORE === 'memory' ? undefined : c.REDIS_URL,
      general: {
        limit: c.RATE_LIMIT_GENERAL_PER_WINDOW,
        windowSeconds: c.RATE_LIMIT_GENERAL_WINDOW_SECONDS,
      },
      // A 304 does not count against the general limit (as GitHub's), but it still costs
      // the query that proves nothing changed: conditional requests have a quota of their
      // own, ten times the general one by default, in the same window.
      conditional: {
        limit: c.RATE_LIMIT_CONDITIONAL_PER_WINDOW || c.RATE_LIMIT_GENERAL_PER_WINDOW * 10,
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
      // Test events and resends a user asks for, per user: each makes this server send a
      // request to an address the user chose, so their number is bounded.
      webhookManual: { limit: 60, windowSeconds: 3600 },
      // Each password check costs a bcrypt hash (tens of milliseconds of a core): failed
      // attempts are counted per client address and per account, and an attempt over
      // either limit is refused before any hash (server/auth/sign-in-limit.ts).
      signInAddress: { limit: c.RATE_LIMIT_SIGN_IN_ADDRESS_PER_WINDOW, windowSeconds: c.RATE_LIMIT_SIGN_IN_ADDRESS_WINDOW_SECONDS },
      signInAccount: { limit: c.RATE_LIMIT_SIGN_IN_ACCOUNT_PER_WINDOW, windowSeconds: c.RATE_LIMIT_SIGN_IN_ACCOUNT_WINDOW_SECONDS },
      // Each request for a reset link costs a lookup and may send an e-mail; each e-mail about
      // an account lands in someone's inbox: both are bounded before any work is done.
      passwordResetAddress: { limit: c.RATE_LIMIT_PASSWORD_RESET_PER_HOUR, windowSeconds: 3600 },
      accountMail: { limit: c.RATE_LIMIT_ACCOUNT_MAIL_PER_HOUR, windowSeconds: 3600 },
      timeoutMs: c.RATE_LIMIT_TIMEOUT_MS,
    },
    clientAddress: clientAddressSource(c),
    // The origin of AUTH_URL; unset: the request's (server/http/public-origin.ts).
    publicUrl: c.AUTH_URL ? new URL(c.AUTH_URL).origin : undefined,
    requestDeadlineMs: c.REQUEST_DEADLINE_MS,
    webhooks: {
      // Serverless functions do not live between requests: the cron route delivers there.
      inProcessWorker: (c.WEBHOOK_WORKER ?? (c.VERCEL === '1' ? 'off' : 'on')) === 'on',
      allowPrivateUrls: c.WEBHOOK_ALLOW_PRIVATE_URLS,
      // Plain http only outside production, or where private receivers are allowed.
      allowHttp: c.NODE_ENV !== 'production' || c.WEBHOOK_ALLOW_PRIVATE_URLS,
      encryptionKey: c.WEBHOOK_ENCRYPTION_KEY,
      cronSecret: c.CRON_SECRET,
    },
    observability: c.OBSERVABILITY !== 'off',
    mail: {
      smtpUrl: c.MAIL_TRANSPORT === 'log' ? undefined : c.SMTP_URL,
      from: c.MAIL_FROM,
      // log: on purpose, never sent (MAIL_TRANSPORT=log); undefined: decided by server/mail/settings.ts.
      logOnly: c.MAIL_TRANSPORT === 'log',
      onVercel: c.VERCEL === '1',
    },
    metricsToken: c.METRICS_TOKEN,
    keyActivity: c.KEY_ACTIVITY !== 'off',
    auditLogRetentionDays: c.AUDIT_LOG_RETENTION_DAYS,
    eventsRetentionDays: c.EVENTS_RETENTION_DAYS,
  };
}

/**
 * Why the app takes DATABASE_URL to reach Postgres through a pooler, or undefined for a
 * direct connection. Behind a pooler the app sends no startup parameter a pooler could
 * refuse (db/client.ts) and checks the role's settings at start instead. Besides
 * DATABASE_PREPARE=false, only hosts that are poolers by their provider's naming are
 * recognised: a false guess would only move the statement timeout from the connection to
 * the role (and warn at start), never break a connection.
 */
export function poolerOf(databaseUrl: string, prepare: boolean): string | undefined {
  if (!prepare) return 'DATABASE_PREPARE=false';
  const host = new URL(databaseUrl).hostname.toLowerCase();
  // Neon: ep-name-123456-pooler.region.aws.neon.tech is the pooled endpoint of ep-name-123456.
  if (host.includes('-pooler.')) return 'a Neon pooled endpoint (-pooler in the host name)';
  // Supabase's pooler (Supavisor): aws-0-region.pooler.supabase.com.
  if (host.endsWith('.pooler.supabase.com')) return 'Supabase’s pooler (pooler.supabase.com)';
  return undefined;
}

/** Upstash's REST endpoint: UPSTASH_REDIS_REST_*, else the KV_REST_API_* pair Vercel's integration sets (as Redis.fromEnv() reads them). */
function upstashOf(c: z.infer<typeof envSchema>): { url: string; token: string } | undefined {
  if (c.UPSTASH_REDIS_REST_URL && c.UPSTASH_REDIS_REST_TOKEN) return { url: c.UPSTASH_REDIS_REST_URL, token: c.UPSTASH_REDIS_REST_TOKEN };
  if (c.KV_REST_API_URL && c.KV_REST_API_TOKEN) return { url: c.KV_REST_API_URL, token: c.KV_REST_API_TOKEN };
  return undefined;
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

/** Forgets the parsed configuration, so that the next use reads the environment again (tests). */
export function resetConfig(): void {
  cached = undefined;
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
