import { and, inArray, sql } from 'drizzle-orm';
import type { Database } from '../../client';
import { contracts } from '../../schema';
import { staleOn } from './expressions';

/**
 * Rolls forward, as of `day` (UTC), up to `batch` completed evergreen contracts whose
 * stored next renewal is before it (expressions.ts, staleOn): it sets next_renewal_date to
 * the day, which the table's trigger (migration 0019) turns into the first renewal on or
 * after it, and the notice deadline with it. Neither updated_at nor a webhook moves: the
 * contract's data is unchanged, only the day is. The rows come from the rolling indexes
 * (their range before today) and are locked SKIP LOCKED, so two instances share the work.
 * Returns how many rows it rolled (fewer than `batch`: none left).
 */
export async function rollRenewalDates(db: Database, day: string, batch: number): Promise<number> {
  // Only rows that move: a term whose next renewal would fall after the year 9999 (the
  // rule keeps the extracted date) would otherwise be picked by every batch, forever.
  const due = db
    .select({ id: contracts.id })
    .from(contracts)
    .where(
      and(
        staleOn(sql`${day}::date`),
        sql`contract_next_renewal(${contracts.renewalDate}, ${contracts.autoRenewal}, ${contracts.renewalTerm}, ${day}::date) >= ${day}::date`,
      ),
    )
    .limit(batch)
    .for('update', { skipLocked: true });
  const rolled = await db
    .update(contracts)
    .set({ nextRenewalDate: day })
    .where(inArray(contracts.id, sql`(${due})`))
    .returning({ id: contracts.id });
  return rolled.length;
}
