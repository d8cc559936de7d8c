/**
 * The JSON of GET /api/health/ready (docs/operations.md, "Health checks").
 *
 * Each part answers one question with a state:
 * - `ok`: fine;
 * - `degraded`: working around a problem, still ready (the replica left out: reads go to
 *   the primary);
 * - `failing`: this instance cannot serve as it should: the answer is 503;
 * - `not_configured`: the part is not used here (no replica, rate limits in memory).
 * `duration_ms` is how long the part's check took (its budget is 1 s); `error` is a code
 * (a Postgres SQLSTATE, a Node.js or driver error code, an error class name, `timeout`),
 * never a driver's message, which may quote a host, a user or a URL.
 */

export type PartState = 'ok' | 'degraded' | 'failing' | 'not_configured';
export type ReadinessState = 'ok' | 'degraded' | 'unavailable';
export type PartName = 'database' | 'migrations' | 'rate_limit_store' | 'replica';

export interface PartReport {
  status: PartState;
  duration_ms: number;
  error?: string;
}

export interface MigrationsReport extends PartReport {
  /** The tag of the latest migration applied (`unknown` when newer than this build); null when none is. */
  applied: string | null;
  /** The latest migration this build knows. */
  expected: string;
}

export interface RateLimitStoreReport extends PartReport {
  store: 'redis' | 'upstash' | 'memory';
}

export interface ReplicaReport extends PartReport {
  /** Why it is not in use: `probing` (waiting for good probes in a row), `behind`, `unreachable`, `read_failed`. */
  reason?: string;
}

export interface ReadinessReport {
  status: ReadinessState;
  /** When the checks ran: the answer is shared by every caller for a second. */
  checked_at: string;
  /** The failing parts, when status is `unavailable`. */
  failing?: PartName[];
  checks: {
    database: PartReport;
    migrations: MigrationsReport;
    rate_limit_store: RateLimitStoreReport;
    replica: ReplicaReport;
  };
}
