import { processRateLimitStore } from '@/server/rate-limit';
import { withinBudget } from '@/server/budget';
import type { RateLimitStoreReport } from './types';

// Read, never written: a GET of a key that does not exist is the cheapest round trip the
// store's own client makes (the same connection, timeouts and fail-fast rule as requests).
const PROBE_KEY = 'cda:health:probe';

/**
 * The shared rate-limit store (Redis over TCP, or Upstash over REST) answers, through the
 * connection the limiter uses. In-memory counting has nothing to fail: not_configured.
 */
export async function checkRateLimitStore(budgetMs: number): Promise<RateLimitStoreReport> {
  const store = processRateLimitStore();
  if (store.kind === 'memory') return { status: 'not_configured', duration_ms: 0, store: store.kind };
  const outcome = await withinBudget(() => store.markers.has(PROBE_KEY), budgetMs);
  return outcome.ok
    ? { status: 'ok', duration_ms: outcome.durationMs, store: store.kind }
    : { status: 'failing', duration_ms: outcome.durationMs, error: outcome.error, store: store.kind };
}
