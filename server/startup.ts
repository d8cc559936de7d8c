import { config, ConfigError } from './config';
import { mailStartupProblems } from './mail/settings';
import { logger } from './observability/logger';
import { startProcessWorker } from './webhooks/process-worker';

// Imported once at server start (instrumentation.ts).
try {
  config();
  // Not while `next build` evaluates the server: a build needs no way to send mail.
  const mailProblems = process.env.NEXT_PHASE === 'phase-production-build' ? [] : mailStartupProblems();
  if (mailProblems.length > 0) throw new ConfigError(mailProblems);
} catch (error) {
  if (error instanceof ConfigError) {
    try {
      // One line naming every variable that is wrong (written synchronously: the exit follows).
      logger().fatal({ problems: error.problems }, 'invalid configuration');
    } catch {
      // LOG_LEVEL or LOG_FORMAT itself is wrong: no logger to write with.
      console.error(error.message);
    }
    process.exit(1);
  }
  throw error;
}

// Not while `next build` evaluates the server (it may load instrumentation to prerender).
if (process.env.NEXT_PHASE !== 'phase-production-build') startProcessWorker();
