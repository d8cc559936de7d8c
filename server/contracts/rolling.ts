import type { Database } from '@/db/client';
import { rollRenewalDates } from '@/db/queries/contracts/rolling';

/**
 * The scheduled job's share of the renewal decisions (docs/api-guide.md, "Renewal
 * decisions"): evergreen contracts whose stored next renewal has passed are rolled to
 * their next term, in batches of ROLL_BATCH rows (one short transaction each, so a
 * pipeline writing the same contracts waits on at most a batch), at most MAX_BATCHES a
 * run. What is left waits for the next run; meanwhile the list reads those rows by the
 * rule (db/queries/contracts/expressions.ts, isStale), so the job's timing never changes
 * an answer, only how many rows take the slower branch.
 */
export const ROLL_BATCH = 1000;
const MAX_BATCHES = 50;

/** Rolls as of `today` (UTC) until none is left, MAX_BATCHES are done or `until` (epoch ms) passes; returns the rows rolled. */
export async function rollRenewals(db: Database, today: string, until?: number): Promise<number> {
  let total = 0;
  for (let i = 0; i < MAX_BATCHES && (until === undefined || Date.now() < until); i++) {
    const rolled = await rollRenewalDates(db, today, ROLL_BATCH);
    total += rolled;
    if (rolled < ROLL_BATCH) break;
  }
  return total;
}
