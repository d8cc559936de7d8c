import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { Database } from '@/db/client';
import { observeStatements } from '@/db/statement-hook';
import { config } from '@/server/config';
import { openedDatabases } from '@/server/database';
import { errorCodeOf } from '@/server/errors';
import { RATE_LIMIT_BUCKETS, type RateLimitBucket } from '@/server/rate-limit/types';

/**
 * The process's Prometheus metrics (docs/operations.md, "Metrics", lists each one) and the
 * one-line calls that count them from the modules where things happen. Scraped at
 * GET /api/metrics (server/health/metrics-endpoint.ts); values read at scrape time (pools, replica,
 * webhook queue) are set by server/health/metrics-scrape.ts.
 *
 * Nothing is recorded unless METRICS_TOKEN is set (nobody could read it) and OBSERVABILITY
 * is not "off" (the bench's switch): every counting call then costs one check of the
 * parsed configuration.
 */

/** OpenTelemetry's advice for http.server.request.duration, in seconds. */
const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10];

/** Methods that get a label of their own; anything else is one "_OTHER" (OpenTelemetry's word), so a client cannot mint series. */
const KNOWN_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);
const STATUS_CLASSES = ['1xx', '2xx', '3xx', '4xx', '5xx'] as const;

export type DeliveryOutcome = 'succeeded' | 'failed' | 'skipped' | 'error';
export type KeyKind = 'api_key' | 'calendar_feed' | 'metrics_token';

function buildMetrics(registry: Registry) {
  const registers = [registry];
  return {
    registry,
    httpDuration: new Histogram({
      name: 'http_server_request_duration_seconds',
      help: 'Time from the request reaching the API router to its response headers, by route template, method and status class; its _count is the number of requests.',
      labelNames: ['route', 'method', 'status_class'],
      buckets: DURATION_BUCKETS,
      registers,
    }),
    rateLimitRefusals: new Counter({
      name: 'rate_limit_refusals_total',
      help: 'Requests refused with 429 by a rate limit, by bucket (general, conditional, export, calendar, auth_failure, webhook_manual).',
      labelNames: ['bucket'],
      registers,
    }),
    failedKeyAttempts: new Counter({
      name: 'auth_failed_key_attempts_total',
      help: 'Requests refused for their token, by kind (api_key, calendar_feed, metrics_token): missing, malformed, unknown, revoked or expired, or sent from an address out of failed attempts.',
      labelNames: ['kind'],
      registers,
    }),
    signInFailures: new Counter({
      name: 'auth_sign_in_failures_total',
      help: 'Password sign-ins refused for a wrong e-mail or password.',
      registers,
    }),
    signInRefusals: new Counter({
      name: 'auth_sign_in_refusals_total',
      help: 'Password sign-ins and sign-ups refused by the failed-attempt limit, before any password check, by bucket (sign_in_address, sign_in_account); and "Forgot password?" requests and account e-mails held back (password_reset_address, account_mail).',
      labelNames: ['bucket'],
      registers,
    }),
    poolInUse: new Gauge({
      name: 'db_pool_connections_in_use',
      help: 'Connections of the pool busy with a statement of the app (statements in flight, at most the pool size), by pool (primary, replica).',
      labelNames: ['pool'],
      registers,
    }),
    poolWaiting: new Gauge({
      name: 'db_pool_statements_waiting',
      help: 'Statements of the app in flight beyond the pool size, that is waiting for a connection, by pool (primary, replica).',
      labelNames: ['pool'],
      registers,
    }),
    poolMax: new Gauge({
      name: 'db_pool_connections_max',
      help: 'Size of the pool (DATABASE_POOL_MAX; 1 for the embedded database), by pool (primary, replica).',
      labelNames: ['pool'],
      registers,
    }),
    replicaInUse: new Gauge({
      name: 'db_replica_in_use',
      help: '1 while reads go to the read replica (pool="replica"), 0 while it is left out and reads go to the primary; absent without DATABASE_REPLICA_URL.',
      labelNames: ['pool'],
      registers,
    }),
    replicaLag: new Gauge({
      name: 'db_replica_lag_seconds',
      help: "Age of the last transaction the replica replayed while it has WAL left to replay (0 when caught up), at its last probe; absent while the probe fails.",
      labelNames: ['pool'],
      registers,
    }),
    statementTimeouts: new Counter({
      name: 'db_statement_timeouts_total',
      help: 'Statements cancelled by statement_timeout (SQLSTATE 57014), by pool (primary, replica, other).',
      labelNames: ['pool'],
      registers,
    }),
    webhookQueueDepth: new Gauge({
      name: 'webhook_queue_depth',
      help: 'Rows waiting in the webhook outbox at scrape time (counted up to 100000): events not yet fanned out, deliveries pending (due or waiting for a retry).',
      labelNames: ['queue'],
      registers,
    }),
    webhookDeliveries: new Counter({
      name: 'webhook_deliveries_total',
      help: 'Webhook delivery attempts by outcome: succeeded (2xx), failed (any other answer or none), skipped (the owner can no longer see the contract), error (could not be attempted; retried after the lease).',
      labelNames: ['outcome'],
      registers,
    }),
    requestLogDropped: new Counter({
      name: 'request_log_dropped_total',
      help: 'Rows of the per-key request log dropped instead of written: the buffer was full (the database slow or down) or the batch insert failed.',
      registers,
    }),
    securityLogDropped: new Counter({
      name: 'security_log_dropped_total',
      help: 'Batched security-log events (failed sign-ins, refused addresses) dropped instead of written: the queue was full or the insert failed.',
      registers,
    }),
    exportRows: new Counter({
      name: 'contracts_export_rows_total',
      help: "Contract rows written to CSV exports (the API's export and the contracts page's download).",
      registers,
    }),
  };
}

type Metrics = ReturnType<typeof buildMetrics> & {
  /**
   * Histogram children by route, then method, then status class: no label object or string
   * of ours per request (prom-client still hashes a child's labels on each observation:
   * about 1.4 µs a request here, against 2.7 ms of CPU for a list request).
   */
  httpChildren: Map<string, Map<string, ReturnType<Histogram['labels']>[]>>;
  /** Statements in flight per database object (server/health/metrics-scrape.ts maps them to pools). */
  inFlight: Map<Database, number>;
};

/**
 * One registry per process, on globalThis: Next.js may evaluate this module once per bundle
 * layer, and two registries would each count half of the requests.
 */
const METRICS = Symbol.for('contract-data-api.metrics');
type GlobalWithMetrics = typeof globalThis & { [METRICS]?: Metrics };

function createMetrics(): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const metrics: Metrics = { ...buildMetrics(registry), httpChildren: new Map(), inFlight: new Map() };
  // Every bucket and outcome from the start, at 0 (labels() alone writes no series), so that
  // rate() and increase() see the first one.
  for (const bucket of RATE_LIMIT_BUCKETS) {
    if (bucket === 'sign_in_address' || bucket === 'sign_in_account' || bucket === 'password_reset_address' || bucket === 'account_mail') metrics.signInRefusals.labels(bucket).inc(0);
    else metrics.rateLimitRefusals.labels(bucket).inc(0);
  }
  for (const kind of ['api_key', 'calendar_feed', 'metrics_token'] satisfies KeyKind[]) metrics.failedKeyAttempts.labels(kind).inc(0);
  for (const outcome of ['succeeded', 'failed', 'skipped', 'error'] satisfies DeliveryOutcome[]) metrics.webhookDeliveries.labels(outcome).inc(0);
  for (const pool of ['primary', 'replica', 'other']) metrics.statementTimeouts.labels(pool).inc(0);
  metrics.requestLogDropped.inc(0);
  metrics.securityLogDropped.inc(0);
  observeStatements((statementDb) => {
    const db = statementDb as Database;
    metrics.inFlight.set(db, (metrics.inFlight.get(db) ?? 0) + 1);
    return (error) => {
      const left = (metrics.inFlight.get(db) ?? 1) - 1;
      if (left > 0) metrics.inFlight.set(db, left);
      else metrics.inFlight.delete(db);
      if (error !== undefined && errorCodeOf(error) === '57014') statementTimedOut(db);
    };
  });
  return metrics;
}

/** Which of the process's pools `db` is (a test's own database is "other"). */
async function poolNameOf(db: Database): Promise<'primary' | 'replica' | 'other'> {
  const { primary, replica } = await openedDatabases();
  return db === primary?.db ? 'primary' : db === replica?.handle.db ? 'replica' : 'other';
}

function statementTimedOut(db: Database): void {
  void poolNameOf(db).then((pool) => processMetrics().statementTimeouts.labels(pool).inc());
}

/** The process's metrics, created on first use. */
export function processMetrics(): Metrics {
  const g = globalThis as GlobalWithMetrics;
  g[METRICS] ??= createMetrics();
  return g[METRICS];
}

/** Whether metrics are recorded and served: METRICS_TOKEN set, OBSERVABILITY not off. */
export function metricsEnabled(): boolean {
  const c = config();
  return c.observability && c.metricsToken !== undefined;
}

/** The metrics if they are recorded, else undefined (the counting calls then do nothing). */
function recording(): Metrics | undefined {
  return metricsEnabled() ? processMetrics() : undefined;
}

// The counting calls, one line each where the thing happens --------------------------------

/** One request answered: `route` is the route's template (never the raw path). */
export function recordHttpRequest(request: { route: string; method: string; status: number; durationSeconds: number }): void {
  const m = recording();
  if (!m) return;
  let byMethod = m.httpChildren.get(request.route);
  if (!byMethod) m.httpChildren.set(request.route, (byMethod = new Map()));
  const method = KNOWN_METHODS.has(request.method) ? request.method : '_OTHER';
  let byClass = byMethod.get(method);
  if (!byClass) byMethod.set(method, (byClass = STATUS_CLASSES.map((statusClass) => m.httpDuration.labels(request.route, method, statusClass))));
  byClass[Math.min(4, Math.max(0, Math.floor(request.status / 100) - 1))]!.observe(request.durationSeconds);
}

export function countRateLimitRefusal(bucket: RateLimitBucket): void {
  recording()?.rateLimitRefusals.labels(bucket).inc();
}

export function countFailedKeyAttempt(kind: KeyKind): void {
  recording()?.failedKeyAttempts.labels(kind).inc();
}

export function countSignInFailure(): void {
  recording()?.signInFailures.inc();
}

export function countSignInRefusal(bucket: 'sign_in_address' | 'sign_in_account' | 'password_reset_address' | 'account_mail'): void {
  recording()?.signInRefusals.labels(bucket).inc();
}

export function countWebhookDelivery(outcome: DeliveryOutcome): void {
  recording()?.webhookDeliveries.labels(outcome).inc();
}

export function countRequestLogDropped(rows: number): void {
  recording()?.requestLogDropped.inc(rows);
}

export function countSecurityLogDropped(events: number): void {
  recording()?.securityLogDropped.inc(events);
}

export function countExportRows(rows: number): void {
  recording()?.exportRows.inc(rows);
}
