import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A real OTLP/HTTP receiver for tests: a node:http server on an ephemeral port that
 * accepts POST /v1/traces in OTLP/JSON (the app is started with
 * OTEL_EXPORTER_OTLP_PROTOCOL=http/json, which @vercel/otel honours) and keeps every
 * request's raw text, so a test can both read the spans and search everything that was
 * exported for secrets.
 */

type AnyValue = { stringValue?: string; intValue?: number | string; boolValue?: boolean; doubleValue?: number };

export interface ExportedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string | undefined;
  name: string;
  /** OTLP's SpanKind: 1 internal, 2 server, 3 client. */
  kind: number;
  startNs: bigint;
  endNs: bigint;
  attributes: Record<string, string | number | boolean>;
  links: { traceId: string; spanId: string }[];
  statusCode: number;
  scope: string;
  serviceName: string;
}

export interface OtlpReceiver {
  /** For OTEL_EXPORTER_OTLP_ENDPOINT (the exporter appends /v1/traces). */
  endpoint: string;
  /** Every request body received so far, as text. */
  raw(): string;
  requests(): { path: string; headers: IncomingHttpHeaders }[];
  spans(): ExportedSpan[];
  close(): Promise<void>;
}

const valueOf = (value: AnyValue): string | number | boolean =>
  value.stringValue ?? (value.intValue !== undefined ? Number(value.intValue) : undefined) ?? value.boolValue ?? value.doubleValue ?? '';

const attributesOf = (list: { key: string; value: AnyValue }[] | undefined) => Object.fromEntries((list ?? []).map(({ key, value }) => [key, valueOf(value)]));

interface OtlpJsonSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  startTimeUnixNano: string | number;
  endTimeUnixNano: string | number;
  attributes?: { key: string; value: AnyValue }[];
  links?: { traceId: string; spanId: string }[];
  status?: { code?: number };
}

interface OtlpJsonRequest {
  resourceSpans?: {
    resource?: { attributes?: { key: string; value: AnyValue }[] };
    scopeSpans?: { scope?: { name?: string }; spans?: OtlpJsonSpan[] }[];
  }[];
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const bodies: string[] = [];
  const received: { path: string; headers: IncomingHttpHeaders }[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      received.push({ path: req.url ?? '', headers: req.headers });
      if (req.method !== 'POST' || req.url !== '/v1/traces') {
        res.writeHead(404).end();
        return;
      }
      bodies.push(Buffer.concat(chunks).toString('utf8'));
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    raw: () => bodies.join('\n'),
    requests: () => [...received],
    spans: () =>
      bodies.flatMap((body) =>
        ((JSON.parse(body) as OtlpJsonRequest).resourceSpans ?? []).flatMap((resourceSpans) => {
          const serviceName = String(attributesOf(resourceSpans.resource?.attributes)['service.name'] ?? '');
          return (resourceSpans.scopeSpans ?? []).flatMap((scopeSpans) =>
            (scopeSpans.spans ?? []).map(
              (span): ExportedSpan => ({
                traceId: span.traceId,
                spanId: span.spanId,
                parentSpanId: span.parentSpanId || undefined,
                name: span.name,
                kind: span.kind,
                startNs: BigInt(span.startTimeUnixNano),
                endNs: BigInt(span.endTimeUnixNano),
                attributes: attributesOf(span.attributes),
                links: (span.links ?? []).map((l) => ({ traceId: l.traceId, spanId: l.spanId })),
                statusCode: span.status?.code ?? 0,
                scope: scopeSpans.scope?.name ?? '',
                serviceName,
              }),
            ),
          );
        }),
      ),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
