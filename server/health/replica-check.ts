import { replicaStatus } from '@/server/database';
import type { ReplicaReport } from './types';

/**
 * The replica's state as its own probe (server/database.ts, every half of
 * DATABASE_REPLICA_MAX_LAG_MS) last found it: no query of its own. Left out is `degraded`,
 * never failing: reads go to the primary meanwhile, and every instance sharing the replica
 * would otherwise leave the balancer at once.
 */
export function checkReplica(): ReplicaReport {
  const started = performance.now();
  const status = replicaStatus();
  const duration_ms = Math.round(performance.now() - started);
  if (!status.configured) return { status: 'not_configured', duration_ms };
  if (status.inUse) return { status: 'ok', duration_ms };
  return { status: 'degraded', duration_ms, reason: status.reason };
}
