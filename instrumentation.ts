/**
 * Runs once when the server starts. On Node.js it validates the configuration, so a
 * wrong environment variable stops `next start` with a message that names it.
 */
export async function register() {
  if (process.env.NEXT_RUNTIME === 'nodejs') {
    await import('./server/startup');
  }
}
