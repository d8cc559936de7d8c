import type { DatabaseHandle } from '@/db/client';
import { logger } from './observability/logger';

/**
 * The session settings the app wants on every connection, checked once per process.
 *
 * A direct connection sends them as startup parameters (db/client.ts). Behind a pooler
 * it cannot: a pooler refuses startup parameters it does not know and closes the
 * connection. There the settings must come from the database role, which only its
 * operator can set: at start the app reads what its connections actually get (through
 * the pool it uses) and, when that is not what it wants, says in one line which SQL to run.
 */

/** What a connection of the pool runs with. */
export interface SessionSettings {
  role: string;
  /** 0: no statement timeout. */
  statementTimeoutMs: number;
  jit: string;
  /** Whether this server can compile with JIT at all (a build without LLVM cannot). */
  jitAvailable: boolean;
  /** 0: no parallel query. */
  maxParallelWorkersPerGather: number;
}

export async function readSessionSettings(handle: Pick<DatabaseHandle, 'query'>): Promise<SessionSettings> {
  // One statement, one round trip. pg_settings.setting is the timeout in milliseconds.
  const [row] = await handle.query<{ role: string; statement_timeout_ms: number; jit: string; jit_available: boolean; parallel_workers: string }>(
    `SELECT current_user AS role,
            (SELECT setting::int FROM pg_settings WHERE name = 'statement_timeout') AS statement_timeout_ms,
            current_setting('jit') AS jit,
            pg_jit_available() AS jit_available,
            current_setting('max_parallel_workers_per_gather') AS parallel_workers`,
  );
  return {
    role: row!.role,
    statementTimeoutMs: Number(row!.statement_timeout_ms),
    jit: row!.jit,
    jitAvailable: row!.jit_available,
    maxParallelWorkersPerGather: Number(row!.parallel_workers),
  };
}

/** `'5s'` or `'1500ms'`: what ALTER ROLE takes, in the unit a reader expects. */
const durationLiteral = (ms: number) => (ms % 1000 === 0 ? `'${ms / 1000}s'` : `'${ms}ms'`);
const quoteIdentifier = (name: string) => `"${name.replace(/"/g, '""')}"`;

/**
 * The warning for `actual`, or undefined when the settings are what the app wants: the
 * statement timeout of DATABASE_STATEMENT_TIMEOUT_MS, no JIT compiling (a list page
 * compiled for 135 to 155 ms before running in 13 to 65 ms, docs/query-plans.md), and no
 * parallel query (two workers took 40 to 50 ms to start for a count of 5 to 20 ms).
 */
export function sessionSettingsWarning(actual: SessionSettings, wantedTimeoutMs: number): string | undefined {
  const problems: string[] = [];
  const fixes: string[] = [];
  const role = quoteIdentifier(actual.role);
  if (actual.statementTimeoutMs !== wantedTimeoutMs) {
    problems.push(
      actual.statementTimeoutMs === 0
        ? 'no statement timeout'
        : `a statement timeout of ${actual.statementTimeoutMs} ms instead of DATABASE_STATEMENT_TIMEOUT_MS's ${wantedTimeoutMs} ms`,
    );
    fixes.push(`ALTER ROLE ${role} SET statement_timeout = ${durationLiteral(wantedTimeoutMs)};`);
  }
  if (actual.jit !== 'off' && actual.jitAvailable) {
    problems.push('JIT compiling on');
    fixes.push(`ALTER ROLE ${role} SET jit = off;`);
  }
  if (actual.maxParallelWorkersPerGather !== 0) {
    problems.push('parallel query on');
    fixes.push(`ALTER ROLE ${role} SET max_parallel_workers_per_gather = 0;`);
  }
  if (problems.length === 0) return undefined;
  return `[database] connections of role ${role} run with ${problems.join(' and ')}; behind a pooler the app cannot set them per connection: run ${fixes.join(' ')} (new connections take it)`;
}

/** Reads the settings and warns when they are not what the app wants. A failure to read them is not an error: the app works either way. */
export async function checkSessionSettings(
  handle: Pick<DatabaseHandle, 'query'>,
  wantedTimeoutMs: number,
  warn: (line: string) => void = (line) => logger().warn({ fix: line }, 'database session settings are not what the app wants'),
): Promise<'as wanted' | 'warned' | 'unknown'> {
  let actual: SessionSettings;
  try {
    actual = await readSessionSettings(handle);
  } catch {
    return 'unknown';
  }
  const warning = sessionSettingsWarning(actual, wantedTimeoutMs);
  if (!warning) return 'as wanted';
  warn(warning);
  return 'warned';
}
