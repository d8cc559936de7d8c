import { getDatabase } from '@/server/database';
import { withinBudget } from '@/server/budget';
import type { PartReport } from './types';

/** The primary answers a trivial statement (opening the pool, or the embedded database, included). */
export async function checkDatabase(budgetMs: number): Promise<PartReport> {
  const outcome = await withinBudget(async () => {
    const handle = await getDatabase();
    await handle.query('SELECT 1');
  }, budgetMs);
  return outcome.ok ? { status: 'ok', duration_ms: outcome.durationMs } : { status: 'failing', duration_ms: outcome.durationMs, error: outcome.error };
}
