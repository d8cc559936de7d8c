import type { Database } from '@/db/client';
import { rollRenewalDates } from '@/db/queries/contracts/rolling';

/**
 * The scheduled job's share of the renewal decisions (docs/api-guide.md, "Renewal
 * decisions"): evergreen contracts whose stored next renewal is before the rolling day are
 * rolled to their first renewal on or after it, in batches of ROLL_BATCH rows (one short
 * transaction each, so a pipeline writing the same contracts waits on at most a batch), at
 * most MAX_BATCHES a run. What is left waits for the next run; meanwhile the list reads
 * those rows by the rule (db/queries/contracts/expressions.ts, isStale), so the job's timing
 * never changes an answer, only how many rows take the slower branch; once none is left, a
 * list plans no stale branch at all (figures.ts, the stale probe).
 *
 * The rolling day is today (UTC) once ROLL_MARGIN_MS of it have passed, yesterday before: a
 * stored date is then never ahead of the rule for a request whose "today" was taken before
 * midnight and whose statements run after it (a statement runs at most
 * DATABASE_STATEMENT_TIMEOUT_MS, 5 s by default), nor for an instance whose clock is a
 * little behind the job's. Yesterday's renewals are stale from midnight until the first
 * run after the margin (at most ROLL_MARGIN_MS plus the worker's interval).
 */
export const ROLL_BATCH = 1000;
const MAX_BATCHES = 50;
export const ROLL_MARGIN_MS = 10 * 60_000;

/** The day the job rolls as of at `now` (rollRenewals). */
export function rollingDay(now: Date): string {
  return new Date(now.getTime() - ROLL_MARGIN_MS).toISOString().slice(0, 10);
}

/** Rolls as of `day` (UTC) until none is left, MAX_BATCHES are done or `until` (epoch ms) passes; returns the rows rolled. */
export async function rollRenewals(db: Database, day: string, until?: number): Promise<number> {
  let total = 0;
  for (let i = 0; i < MAX_BATCHES && (until === undefined || Date.now() < until); i++) {
    const rolled = await rollRenewalDates(db, day, ROLL_BATCH);
    total += rolled;
    if (rolled < ROLL_BATCH) break;
  }
  return total;
}
