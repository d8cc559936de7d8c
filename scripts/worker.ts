import { ConfigError } from '@/server/config';
import { mailStartupProblems } from '@/server/mail/settings';
import { getDatabase } from '@/server/database';
import { logger } from '@/server/observability/logger';
import { WebhookWorker } from '@/server/webhooks/worker';
import { UsageError } from './run-script';

/**
 * `npm run worker`: the webhook worker (which also sends the mail outbox) alone, for deployments that run it apart from the
 * web servers (start these with WEBHOOK_WORKER=off then, or keep both: several workers
 * never deliver one attempt twice). Stops on SIGTERM or SIGINT after the pass under way.
 * A long-running service: it logs JSON lines on stdout like the web server (LOG_LEVEL,
 * LOG_FORMAT); a mistake in how it was started is a plain message on stderr.
 */
async function main() {
  // The worker sends the mail outbox too: the same refusal as the web server's (server/startup.ts).
  const mailProblems = mailStartupProblems();
  if (mailProblems.length > 0) throw new ConfigError(mailProblems);
  const handle = await getDatabase();
  if (handle.driver === 'pglite') {
    await handle.close();
    throw new UsageError(
      'The embedded database allows one process at a time, and `npm start` already delivers webhooks in process. Set DATABASE_URL to run a worker of its own.',
    );
  }
  const worker = new WebhookWorker({ handle });
  worker.start();
  logger().info('webhook worker started: delivering until SIGTERM or SIGINT');
  let stopping = false;
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.on(signal, () => {
      if (stopping) return;
      stopping = true;
      logger().info({ signal }, 'webhook worker stopping after the pass under way');
      void worker
        .stop()
        .then(() => handle.close())
        .then(() => process.exit(0));
    });
  }
}

main().catch((error: unknown) => {
  if (error instanceof UsageError || error instanceof ConfigError) console.error(error.message);
  else logger().fatal({ err: error }, 'webhook worker failed');
  process.exit(1);
});
