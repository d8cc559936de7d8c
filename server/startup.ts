import { config, ConfigError } from './config';
import { startProcessWorker } from './webhooks/process-worker';

// Imported once at server start (instrumentation.ts).
try {
  config();
} catch (error) {
  if (error instanceof ConfigError) {
    console.error(error.message);
    process.exit(1);
  }
  throw error;
}

// Not while `next build` evaluates the server (it may load instrumentation to prerender).
if (process.env.NEXT_PHASE !== 'phase-production-build') startProcessWorker();
