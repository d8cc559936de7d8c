import type { Database } from '@/db/client';
import { webhookQueueDepth } from '@/db/queries/webhooks';

/** Counts stop here: past it the gauge says "at least this many", which is enough to alert on. */
export const QUEUE_DEPTH_CAP = 100_000;

/**
 * The webhook outbox's backlog (events not fanned out, deliveries pending), or undefined
 * when the database does not answer within `budgetMs`: a metrics scrape must not hang on
 * a database that is down or slow.
 */
export async function webhookBacklog(db: () => Promise<Database>, budgetMs: number): Promise<{ events: number; deliveries: number } | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), budgetMs);
  });
  const counted = db()
    .then((d) => webhookQueueDepth(d, QUEUE_DEPTH_CAP))
    .catch(() => undefined);
  try {
    return await Promise.race([counted, expired]);
  } finally {
    clearTimeout(timer);
  }
}
