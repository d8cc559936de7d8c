import { config } from '@/server/config';
import { getDb, getReadDb, openedDatabases } from '@/server/database';
import { webhookBacklog } from '@/server/webhooks/queue-depth';
import { processMetrics } from '@/server/observability/metrics';

/** How long a scrape waits for the webhook queue's count (Prometheus' default scrape timeout is 10 s). */
const QUEUE_DEPTH_BUDGET_MS = 1000;

type Metrics = ReturnType<typeof processMetrics>;

/**
 * The Prometheus text of the process's metrics, with the values that are read rather than
 * counted set first: the pools' statements in flight, the replica's state and lag (from
 * its last probe), and the webhook outbox's backlog (one bounded query).
 */
export async function renderMetrics(): Promise<{ contentType: string; text: string }> {
  const m = processMetrics();
  // The pools first: read during the queue's count, they would count the scrape's own statement.
  await readPools(m);
  await readWebhookQueue(m);
  return { contentType: m.registry.contentType, text: await m.registry.metrics() };
}

async function readPools(m: Metrics): Promise<void> {
  // The replica is opened on the first read: a scrape counts as one, so that an instance
  // that has served nothing yet still reports its replica (from its next scrape on).
  await getReadDb().catch(() => undefined);
  const { primary, replica } = await openedDatabases();
  for (const gauge of [m.poolInUse, m.poolWaiting, m.poolMax, m.replicaInUse, m.replicaLag]) gauge.reset();
  const pools = [
    ...(primary ? [{ pool: 'primary', db: primary.db, max: primary.driver === 'pglite' ? 1 : config().database.poolMax }] : []),
    ...(replica ? [{ pool: 'replica', db: replica.handle.db, max: config().database.poolMax }] : []),
  ];
  for (const { pool, db, max } of pools) {
    // postgres.js counts nothing it exposes: the statements in flight (db/client.ts's
    // observer) are as many connections in use, and what exceeds the pool waits for one.
    const inFlight = m.inFlight.get(db) ?? 0;
    m.poolInUse.labels(pool).set(Math.min(inFlight, max));
    m.poolWaiting.labels(pool).set(Math.max(0, inFlight - max));
    m.poolMax.labels(pool).set(max);
  }
  if (replica) {
    m.replicaInUse.labels('replica').set(replica.inUse ? 1 : 0);
    if (replica.lagSeconds !== undefined) m.replicaLag.labels('replica').set(replica.lagSeconds);
  }
}

async function readWebhookQueue(m: Metrics): Promise<void> {
  const backlog = await webhookBacklog(getDb, QUEUE_DEPTH_BUDGET_MS);
  m.webhookQueueDepth.reset();
  // Unknown (the database did not answer in time) is no sample rather than a stale one.
  if (!backlog) return;
  m.webhookQueueDepth.labels('events').set(backlog.events);
  m.webhookQueueDepth.labels('deliveries').set(backlog.deliveries);
}
