import type { Database } from '@/db/client';
import { webhookQueueDepth } from '@/db/queries/webhooks';
import { withinBudget } from '@/server/budget';

/** Counts stop here: past it the gauge says "at least this many", which is enough to alert on. */
export const QUEUE_DEPTH_CAP = 100_000;

/**
 * The webhook outbox's backlog (events not fanned out, deliveries pending), or undefined
 * when the database does not answer within `budgetMs`: a metrics scrape must not hang on
 * a database that is down or slow.
 */
export async function webhookBacklog(db: () => Promise<Database>, budgetMs: number): Promise<{ events: number; deliveries: number } | undefined> {
  const counted = await withinBudget(async () => webhookQueueDepth(await db(), QUEUE_DEPTH_CAP), budgetMs);
  return counted.ok ? counted.value : undefined;
}
