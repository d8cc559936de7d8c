import { config } from '@/server/config';
import { getDatabase } from '@/server/database';
import { logger } from '@/server/observability/logger';
import { WebhookWorker } from './worker';

/**
 * The worker inside `next start` (and `next dev`): started once per process at server
 * start (instrumentation.ts → server/startup.ts) unless WEBHOOK_WORKER=off, and never on
 * Vercel by default (serverless functions do not live between requests; the cron route
 * drains the queue there). A process that stops with deliveries claimed loses nothing:
 * their leases expire and any worker takes them again.
 */
const WORKER = Symbol.for('contract-data-api.webhook-worker');
type WithWorker = typeof globalThis & { [WORKER]?: Promise<WebhookWorker> };

export function startProcessWorker(): void {
  const g = globalThis as WithWorker;
  if (!config().webhooks.inProcessWorker || g[WORKER]) return;
  g[WORKER] = getDatabase().then((handle) => {
    const worker = new WebhookWorker({ handle });
    worker.start();
    return worker;
  });
  g[WORKER].catch((error: unknown) => {
    delete g[WORKER];
    logger().error({ err: error }, 'webhook worker did not start');
  });
}
