import type { Attributes } from '@opentelemetry/api';
import type { ReadableSpan, Span, SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { registerOTel } from '@vercel/otel';

/**
 * The OpenTelemetry SDK, registered by instrumentation.ts when an OTLP endpoint is set
 * (./tracing-config.ts). @vercel/otel reads the standard variables itself:
 * OTEL_EXPORTER_OTLP_ENDPOINT (+ "/v1/traces") or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT,
 * OTEL_EXPORTER_OTLP_PROTOCOL ("http/protobuf", the default, or "http/json"),
 * OTEL_EXPORTER_OTLP_HEADERS, OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES,
 * OTEL_TRACES_SAMPLER(_ARG), OTEL_PROPAGATORS, OTEL_BSP_* (the batch's timing).
 *
 * Next.js's own spans are kept (routing, the route handler, the response; a page's
 * rendering): they time what happens around the app's code. Two things are corrected
 * before any span is exported, by the processor below.
 */
export function startTracing(): void {
  // @vercel/otel appends "/v1/traces" to the endpoint as it is: "https://otlp.example.com/"
  // would post to "…//v1/traces", which collectors answer 404.
  const endpoint = process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
  if (endpoint?.endsWith('/')) process.env.OTEL_EXPORTER_OTLP_ENDPOINT = endpoint.replace(/\/+$/, '');
  registerOTel({
    serviceName: 'contract-data-api',
    // First, so that the exporters ("auto") see the corrected spans.
    spanProcessors: [new RouteAndRedaction(), 'auto'],
    // Not its default fetch/http instrumentation: it names each outgoing request's span
    // after its full URL, and a webhook's URL may hold its receiver's secret in the path.
    // The app's own spans cover what it calls out to (the rate-limit store, webhooks).
    instrumentations: [],
  });
}

/** Attributes in which Next.js and the fetch instrumentation write a request's URL. */
const URL_ATTRIBUTES = ['http.target', 'http.url', 'url.full', 'url.path', 'url.query'];
const APP_TRACER = 'contract-data-api';
const NEXT_REQUEST_SPAN = 'BaseServer.handleRequest';
const MAX_PENDING_ROUTES = 10_000;

/**
 * A URL as it may be exported: no query string (it may carry anything a client put
 * there) and no calendar feed token (the feed's address is its secret).
 */
export function redactUrl(value: string): string {
  const query = value.search(/[?#]/);
  const path = query === -1 ? value : value.slice(0, query);
  return path.replace(/(\/api\/v1\/calendar\/)[^/]+/g, '$1{token}.ics');
}

/**
 * 1. Next.js records the raw URL of every request (`http.target`): a calendar feed's
 *    token, any query string. Redacted as each span starts (Next.js sets it then) and
 *    again as it ends.
 * 2. Next.js names its request span after the file route (`GET /api/v1/[[...path]]`)
 *    for every API call. When the app's request span (../observability/tracing.ts) has
 *    matched a route template, Next.js's span of the same trace is given that template
 *    as `http.route` and name when it ends, as Next.js does itself for file routes (and
 *    as @vercel/otel amends ended spans' attributes): backends group requests by the
 *    root span's route.
 */
class RouteAndRedaction implements SpanProcessor {
  /** The route template and method of each trace's app request span, until Next.js's span ends. */
  private readonly routes = new Map<string, { route: string; method: string }>();

  onStart(span: Span): void {
    for (const key of URL_ATTRIBUTES) {
      const value = span.attributes[key];
      if (typeof value === 'string') span.setAttribute(key, redactUrl(value));
    }
    if (span.name.includes('?') || span.name.includes('/calendar/')) span.updateName(redactUrl(span.name));
  }

  onEnd(span: ReadableSpan): void {
    const { traceId } = span.spanContext();
    const attributes = span.attributes;
    // Again at the end: Next.js's app-route template sets http.target once more when a
    // request finishes outside its own server (an adapter calling the route directly).
    for (const key of URL_ATTRIBUTES) {
      const value = attributes[key];
      if (typeof value === 'string') (attributes as Attributes)[key] = redactUrl(value);
    }
    if (span.instrumentationScope.name === APP_TRACER) {
      const route = attributes['http.route'];
      // Only below a span of this process (Next.js's): otherwise nothing would take it out.
      if (typeof route === 'string' && span.parentSpanContext && !span.parentSpanContext.isRemote) {
        if (this.routes.size >= MAX_PENDING_ROUTES) this.routes.clear();
        this.routes.set(traceId, { route, method: String(attributes['http.request.method'] ?? 'HTTP') });
      }
      return;
    }
    if (attributes['next.span_type'] !== NEXT_REQUEST_SPAN) return;
    const matched = this.routes.get(traceId);
    if (!matched) return;
    this.routes.delete(traceId);
    Object.assign(attributes as Attributes, { 'http.route': matched.route });
    (span as { name: string }).name = `${matched.method === '_OTHER' ? 'HTTP' : matched.method} ${matched.route}`;
  }

  forceFlush(): Promise<void> {
    return Promise.resolve();
  }

  shutdown(): Promise<void> {
    this.routes.clear();
    return Promise.resolve();
  }
}
