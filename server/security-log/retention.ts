import type { Database } from '@/db/client';
import { pruneRequestLog, pruneUsage } from '@/db/queries/key-activity';
import { insertExpiredKeyEvents, pruneSecurityEvents } from '@/db/queries/security-events';
import { REQUEST_LOG_DAYS, REQUEST_LOG_PER_KEY, USAGE_DAYS, USAGE_HOURS } from '@/lib/key-activity';
import { config } from '@/server/config';

/**
 * What keeps the activity tables bounded, run by the webhook worker every few minutes (in
 * process, `npm run worker`, and the Vercel cron route: server/webhooks/worker.ts):
 * - "API key expired" events for keys whose expiry has passed (a key expires by the clock);
 * - security events older than AUDIT_LOG_RETENTION_DAYS (default 400), the one deletion
 *   the table's trigger allows;
 * - the request log beyond each key's newest 1,000 rows, and anything older than 7 days;
 * - hourly usage counts older than 48 hours, daily ones older than 90 days (the database
 *   store; Redis keys expire by themselves).
 */
export interface RetentionResult {
  expiredKeyEvents: number;
  securityEvents: number;
  requestLog: number;
  usage: number;
}

const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;

export async function runActivityRetention(db: Database, now: Date): Promise<RetentionResult> {
  const auditBefore = new Date(now.getTime() - config().auditLogRetentionDays * DAY_MS);
  const expiredKeyEvents = await insertExpiredKeyEvents(db, now, auditBefore, 1000);
  const securityEvents = await pruneSecurityEvents(db, auditBefore);
  const requestLog = await pruneRequestLog(db, new Date(now.getTime() - REQUEST_LOG_DAYS * DAY_MS), REQUEST_LOG_PER_KEY);
  // One bucket of margin: the page shows the current bucket and the 47 hours (89 days) before it.
  const usage = await pruneUsage(db, new Date(now.getTime() - (USAGE_HOURS + 1) * HOUR_MS), new Date(now.getTime() - (USAGE_DAYS + 1) * DAY_MS));
  return { expiredKeyEvents, securityEvents, requestLog, usage };
}
