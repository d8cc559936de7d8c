/**
 * Whether this process exports traces: an OTLP endpoint is configured (the variables
 * OpenTelemetry's SDKs and @vercel/otel read) and the SDK is not disabled. Read by
 * instrumentation.ts, which registers a tracer provider only then, and by ./tracing.ts,
 * whose span helpers do nothing at all otherwise.
 */
export function tracingConfigured(env: Readonly<Record<string, string | undefined>>): boolean {
  const set = (name: string) => (env[name]?.trim() ?? '') !== '';
  // @vercel/otel takes any non-empty OTEL_SDK_DISABLED (even "false") as "disabled".
  if (set('OTEL_SDK_DISABLED')) return false;
  return set('OTEL_EXPORTER_OTLP_ENDPOINT') || set('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT');
}
