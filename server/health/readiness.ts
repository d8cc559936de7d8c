import { checkDatabase } from './database-check';
import { checkMigrations } from './migrations-check';
import { oncePerInterval } from './once-per-interval';
import { checkRateLimitStore } from './rate-limit-store-check';
import { checkReplica } from './replica-check';
import type { PartName, ReadinessReport } from './types';
import { logger } from '@/server/observability/logger';

/** Each part's check gives up after this long (they run in parallel: the whole check too). */
export const READINESS_BUDGET_MS = 1_000;
/** One check per process per this long, whoever asks and however often. */
export const READINESS_CACHE_MS = 1_000;

/** Every part checked once, in parallel, each within `budgetMs`. */
export async function checkReadiness(budgetMs = READINESS_BUDGET_MS): Promise<ReadinessReport> {
  const checkedAt = new Date().toISOString();
  const [database, migrations, rate_limit_store] = await Promise.all([checkDatabase(budgetMs), checkMigrations(budgetMs), checkRateLimitStore(budgetMs)]);
  const checks = { database, migrations, rate_limit_store, replica: checkReplica() };
  const failing = (Object.keys(checks) as PartName[]).filter((name) => checks[name].status === 'failing');
  if (failing.length > 0) return { status: 'unavailable', checked_at: checkedAt, failing, checks };
  const degraded = Object.values(checks).some((part) => part.status === 'degraded');
  return { status: degraded ? 'degraded' : 'ok', checked_at: checkedAt, checks };
}

/** One line when the instance's readiness changes (not on every check: balancers poll every second). */
function readinessLine(report: ReadinessReport): string {
  const parts = Object.entries(report.checks)
    .filter(([, part]) => part.status === 'failing' || part.status === 'degraded')
    .map(([name, part]) => `${name} ${part.status} (${'error' in part && part.error ? part.error : 'reason' in part ? part.reason : ''})`);
  return `[health] readiness ${report.status}${parts.length ? `: ${parts.join(', ')}` : ''}`;
}

// The shared check lives on globalThis: Next.js may evaluate this module once per bundle
// layer, and a cache per layer would let each reach the database once per second.
const SHARED = Symbol.for('contract-data-api.readiness');
interface Shared {
  check: ReturnType<typeof oncePerInterval<ReadinessReport>>;
  lastStatus?: ReadinessReport['status'];
}
type GlobalWithReadiness = typeof globalThis & { [SHARED]?: Shared };

function shared(): Shared {
  const g = globalThis as GlobalWithReadiness;
  if (!g[SHARED]) {
    const state: Shared = {
      check: oncePerInterval(async () => {
        const report = await checkReadiness();
        // A process starts as ready in the log's eyes: only a change from there is news.
        if (report.status !== (state.lastStatus ?? 'ok')) {
          logger()[report.status === 'ok' ? 'info' : 'warn']({ readiness: readinessLine(report) }, 'readiness changed');
        }
        state.lastStatus = report.status;
        return report;
      }, READINESS_CACHE_MS),
    };
    g[SHARED] = state;
  }
  return g[SHARED];
}

/** This process's readiness: at most one check per second, shared by every caller. */
export const processReadiness = (): Promise<ReadinessReport> => shared().check.get();

/** Forgets the last check (tests that change the configuration between checks). */
export function resetProcessReadiness(): void {
  const g = globalThis as GlobalWithReadiness;
  delete g[SHARED];
}
