import type { Database } from '@/db/client';
import { rollRenewalDates } from '@/db/queries/contracts/rolling';
import { addDays } from '@/server/dates';

/**
 * The scheduled job's share of the renewal decisions (docs/api-guide.md, "Renewal
 * decisions"): evergreen contracts whose stored next renewal is before yesterday (UTC) are
 * rolled to their first renewal on or after yesterday, in batches of ROLL_BATCH rows (one short transaction each, so a
 * pipeline writing the same contracts waits on at most a batch), at most MAX_BATCHES a
 * run. What is left waits for the next run; meanwhile the list reads those rows by the
 * rule (db/queries/contracts/expressions.ts, isStale), so the job's timing never changes
 * an answer, only how many rows take the slower branch. Yesterday, not today: a stored
 * date is then never ahead of the rule for any reader whose clock says yesterday or later
 * (an instance a little behind the job's around midnight); the price is that yesterday's
 * renewals stay stale until the next day's runs.
 */
export const ROLL_BATCH = 1000;
const MAX_BATCHES = 50;

/** Rolls as of the day before `today` (UTC) until none is left, MAX_BATCHES are done or `until` (epoch ms) passes; returns the rows rolled. */
export async function rollRenewals(db: Database, today: string, until?: number): Promise<number> {
  const day = addDays(today, -1);
  let total = 0;
  for (let i = 0; i < MAX_BATCHES && (until === undefined || Date.now() < until); i++) {
    const rolled = await rollRenewalDates(db, day, ROLL_BATCH);
    total += rolled;
    if (rolled < ROLL_BATCH) break;
  }
  return total;
}
