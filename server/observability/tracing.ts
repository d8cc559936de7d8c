import {
  context,
  createContextKey,
  propagation,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Span,
  type TextMapGetter,
} from '@opentelemetry/api';
import { setStatementHook, type StatementInfo } from '@/db/statement-hook';
import { clientAddressOf, SHARED_CLIENT_BUCKET } from '@/server/http/client-address';
import { currentRequest } from './request-scope';
import { tracingConfigured } from './tracing-config';

/**
 * The application's spans (docs/operations.md, "Traces"). instrumentation.ts registers
 * the OpenTelemetry SDK only when an OTLP endpoint is configured; otherwise every helper
 * here returns at its first line, on a boolean read once at start, without touching the
 * OpenTelemetry API (not even its no-op tracer): tracing off costs one branch per call.
 *
 * What a span may carry: names, templates, counts, outcomes. Never a token, a key, a
 * statement's parameters or text, a query string or a webhook URL.
 */
export const TRACING: boolean = tracingConfigured(process.env);

const TRACER_NAME = 'contract-data-api';
const tracer = () => trace.getTracer(TRACER_NAME);

/** The trace id of the active span (for the request's log line), or undefined when tracing is off. */
export function currentTraceId(): string | undefined {
  if (!TRACING) return undefined;
  const spanContext = trace.getActiveSpan()?.spanContext();
  return spanContext && trace.isSpanContextValid(spanContext) ? spanContext.traceId : undefined;
}

const failed = (span: Span, error: unknown) => {
  span.setStatus({ code: SpanStatusCode.ERROR });
  // The error's class only: a message can quote input (a driver error, a parameter).
  span.setAttribute('error.type', error instanceof Error ? (error as { code?: unknown }).code?.toString() || error.name : 'unknown');
};

async function runInSpan<T>(span: Span, parent: Context, fn: (span: Span) => Promise<T>): Promise<T> {
  try {
    return await context.with(trace.setSpan(parent, span), fn, undefined, span);
  } catch (error) {
    failed(span, error);
    throw error;
  } finally {
    span.end();
  }
}

/**
 * Runs `fn` in a child span of the active span. Without tracing, or outside any span (a
 * background loop's statements), it only runs `fn`: a trace per poll would be noise.
 * `fn` gets the span (to add its outcome) or undefined.
 */
export function inSpan<T>(name: string, fn: (span: Span | undefined) => Promise<T>, options: { kind?: SpanKind; attributes?: Attributes } = {}): Promise<T> {
  if (!TRACING) return fn(undefined);
  const parent = context.active();
  if (!trace.getSpan(parent)) return fn(undefined);
  return runInSpan(tracer().startSpan(name, options, parent), parent, fn);
}

/**
 * Runs `fn` in a span of its own trace: a webhook delivery, which the worker makes outside
 * any request. One made during a request (a test event sent from Settings) links to it.
 */
export function inRootSpan<T>(name: string, fn: (span: Span | undefined) => Promise<T>, options: { kind?: SpanKind; attributes?: Attributes } = {}): Promise<T> {
  if (!TRACING) return fn(undefined);
  const during = trace.getActiveSpan()?.spanContext();
  const span = tracer().startSpan(name, { ...options, root: true, links: during && trace.isSpanContextValid(during) ? [{ context: during }] : [] });
  return runInSpan(span, context.active(), fn);
}

/** The W3C trace context of the active span as request headers (`traceparent`), or none. */
export function traceContextHeaders(): Record<string, string> {
  if (!TRACING) return {};
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return carrier;
}

/**
 * Wraps an async generator of pages (the export, the calendar feed) so that reading each
 * page is a span, a child of the request that created it (pages are read later, as the
 * client pulls the body, outside the request's own context), with its row count.
 */
export function tracedPages<Page>(pages: AsyncGenerator<Page>, name: string, rowsOf: (page: Page) => number): AsyncGenerator<Page> {
  if (!TRACING) return pages;
  const parent = context.active();
  if (!trace.getSpan(parent)) return pages;
  let index = 0;
  const traced: AsyncGenerator<Page> = {
    next: (...args) => {
      const span = tracer().startSpan(name, { attributes: { 'app.page.index': index++ } }, parent);
      return runInSpan(span, parent, async () => {
        const page = await pages.next(...args);
        span.setAttribute('app.page.rows', page.done ? 0 : rowsOf(page.value));
        return page;
      });
    },
    return: (value) => pages.return(value),
    throw: (error) => pages.throw(error),
    [Symbol.asyncIterator]() {
      return traced;
    },
    // Node 20's lib types ask for it on async generators (explicit resource management).
    [Symbol.asyncDispose]: async () => {
      await pages.return(undefined);
    },
  } as AsyncGenerator<Page>;
  return traced;
}

// SQL statements ---------------------------------------------------------------------------

/**
 * A span per statement the app sends, inside a request's span (db/client.ts tells every
 * statement here, whichever way it is sent: Drizzle's builders, transactions, prepared
 * statements, raw SQL): db.system.name, db.operation.name, the table it names first and
 * the statement's name when it has one; nothing of its values or its text. Its parent is
 * the span active when the statement is sent, so a transaction's statements are
 * children of their request's span too.
 */
function traceStatement(statement: StatementInfo): ((error?: unknown) => void) | undefined {
  const parent = context.active();
  if (!trace.getSpan(parent)) return undefined;
  // Semantic conventions' summary: "{operation} {target}", the statement's name standing for its target.
  const target = statement.name ?? statement.collection;
  const summary = target ? `${statement.operation} ${target}` : statement.operation;
  const span = tracer().startSpan(
    summary,
    {
      kind: SpanKind.CLIENT,
      attributes: {
        'db.system.name': 'postgresql',
        'db.operation.name': statement.operation,
        'db.query.summary': summary,
        ...(statement.collection ? { 'db.collection.name': statement.collection } : {}),
        ...(statement.name ? { 'db.statement.name': statement.name } : {}),
      },
    },
    parent,
  );
  return (error) => {
    if (error !== undefined) failed(span, error);
    span.end();
  };
}

if (TRACING) setStatementHook(traceStatement);

// API requests -----------------------------------------------------------------------------

const REQUEST_SPAN = createContextKey('contract-data-api.request-span');
interface RequestSpan {
  span: Span;
  method: string;
}
const KNOWN_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'TRACE', 'CONNECT', 'QUERY']);
const headerGetter: TextMapGetter<Headers> = {
  get: (headers, key) => headers.get(key) ?? undefined,
  keys: (headers) => [...headers.keys()],
};

/**
 * The span of one API request, around everything else the request does (the metrics are
 * recorded inside it; the request's log record, opened outside by the route's observer,
 * is given its trace id here). It is named and
 * given its route by `setRequestRoute` once the router has matched the path, and ends
 * when the response body has been sent (an export streams long after the handler
 * returned), with the response's status.
 *
 * Under `next start` and on Vercel it is a child of Next.js's own request span (whose
 * route ./otel.ts corrects); elsewhere (tests calling the router) it is the trace's root,
 * continuing an incoming `traceparent`.
 */
export async function traceApiRequest(req: Request, serve: (req: Request) => Promise<Response>): Promise<Response> {
  if (!TRACING) return serve(req);
  const active = context.active();
  const local = trace.getSpan(active);
  const parent = local ? active : propagation.extract(active, req.headers, headerGetter);
  const method = KNOWN_METHODS.has(req.method) ? req.method : '_OTHER';
  // Only an address the configuration vouches for (server/http/client-address.ts); IPv6 by its /64.
  const trusted = clientAddressOf(req.headers);
  const address = trusted === SHARED_CLIENT_BUCKET ? undefined : trusted;
  const span = tracer().startSpan(
    method,
    {
      kind: local && !local.spanContext().isRemote ? SpanKind.INTERNAL : SpanKind.SERVER,
      attributes: {
        'http.request.method': method,
        ...(method === '_OTHER' ? { 'http.request.method_original': req.method.slice(0, 32) } : {}),
        ...(address ? { 'client.address': address } : {}),
      },
    },
    parent,
  );
  // The request's log line names this span's trace (its observer read the active span
  // before this one existed: under next start Next.js's span of the same trace, elsewhere none).
  const record = currentRequest();
  if (record) record.traceId = span.spanContext().traceId;
  let response: Response;
  try {
    response = await context.with(trace.setSpan(parent, span).setValue(REQUEST_SPAN, { span, method } satisfies RequestSpan), serve, undefined, req);
  } catch (error) {
    failed(span, error);
    span.end();
    throw error;
  }
  span.setAttribute('http.response.status_code', response.status);
  if (response.status >= 500) {
    span.setStatus({ code: SpanStatusCode.ERROR });
    span.setAttribute('error.type', String(response.status));
  }
  if (!response.body) {
    span.end();
    return response;
  }
  return new Response(endWhenSent(response.body, span), { status: response.status, statusText: response.statusText, headers: response.headers });
}

/**
 * Names the current request's span after its route template (`/api/v1/contracts/{id}`,
 * never the raw path) and records `url.path`: the path itself, unless the template has a
 * `{token}` (a calendar feed's address is its secret), then the template.
 */
export function setRequestRoute(template: string, path: string): void {
  if (!TRACING) return;
  const request = context.active().getValue(REQUEST_SPAN) as RequestSpan | undefined;
  if (!request) return;
  request.span.setAttributes({ 'http.route': template, 'url.path': template.includes('{token}') ? template : path.slice(0, 512) });
  // Semantic conventions: "{method} {route}", "HTTP" for a method outside the known set.
  request.span.updateName(`${request.method === '_OTHER' ? 'HTTP' : request.method} ${template}`);
}

/** `traceApiRequest` for an endpoint of one route (the app's tRPC endpoint, the page's CSV download). */
export function traceRoute(req: Request, template: string, serve: (req: Request) => Promise<Response>): Promise<Response> {
  if (!TRACING) return serve(req);
  return traceApiRequest(req, (inner) => {
    setRequestRoute(template, new URL(inner.url).pathname);
    return serve(inner);
  });
}

/** The body, passed on chunk by chunk; the span ends when it is read to the end, fails or is cancelled. */
function endWhenSent(body: ReadableStream<Uint8Array>, span: Span): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  let ended = false;
  const end = (error?: unknown) => {
    if (ended) return;
    ended = true;
    if (error !== undefined) failed(span, error);
    span.end();
  };
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done, value } = await reader.read();
        if (done) {
          end();
          controller.close();
        } else {
          controller.enqueue(value);
        }
      } catch (error) {
        end(error);
        controller.error(error);
      }
    },
    async cancel(reason) {
      span.setAttribute('app.response.cancelled', true);
      end();
      await reader.cancel(reason);
    },
    // No read-ahead: a page is read from the database only when the client takes the last one.
  }, { highWaterMark: 0 });
}
