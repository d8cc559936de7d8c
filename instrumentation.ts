/**
 * Runs once when the server starts. On Node.js it registers OpenTelemetry when an OTLP
 * endpoint is configured (nothing at all otherwise: docs/operations.md, "Traces"), then
 * validates the configuration, so a wrong environment variable stops `next start` with a
 * message that names it, starts the webhook worker, and logs page requests.
 */
export async function register() {
  if (process.env.NEXT_RUNTIME === 'nodejs') {
    // Before the first request reaches Next.js: a page POST too large for proxy.ts to
    // refuse in time is refused here (server/http/page-body-guard.ts).
    const { installPageBodyGuard } = await import('./server/http/page-body-guard');
    installPageBodyGuard();
    const { tracingConfigured } = await import('./server/observability/tracing-config');
    if (tracingConfigured(process.env)) {
      const { startTracing } = await import('./server/observability/otel');
      startTracing();
    }
    await import('./server/startup');
    // A log line per page request (server/observability/page-requests.ts).
    const { logPageRequests } = await import('./server/observability/page-requests');
    logPageRequests();
  }
}
