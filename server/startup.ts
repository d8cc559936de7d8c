import { config, ConfigError } from './config';

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
