import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { DELIVERY_TIMEOUT_SECONDS, RESPONSE_EXCERPT_BYTES } from '@/lib/webhooks';
import { inRootSpan, traceContextHeaders } from '@/server/observability/tracing';
import { DestinationError, resolveDestination, systemResolver, type DestinationPolicy, type Resolver } from './destination';

/**
 * One HTTP POST of a webhook: to the address checked by ./destination.ts and no other
 * (the connection's host lookup answers that address, so a second DNS answer is never
 * asked for), within DELIVERY_TIMEOUT_SECONDS from the name lookup to the last byte
 * read, redirects not followed (a 3xx is a failed attempt), at most RESPONSE_EXCERPT_BYTES
 * of the answer read, no proxy and no connection pooling. TLS certificates are verified
 * against the URL's host name as usual.
 */

export interface SendResult {
  ok: boolean;
  statusCode: number | null;
  durationMs: number;
  /** The beginning of the answer (at most 4 KiB, as text). */
  response: string | null;
  /** Why the attempt failed, for the endpoint's owner (never a secret). */
  error: string | null;
}

export interface SendOptions {
  policy: DestinationPolicy;
  resolve?: Resolver;
  timeoutMs?: number;
}

const USER_AGENT = 'ContractDataAPI-Webhooks/1.0 (+https://www.standardwebhooks.com/)';

/**
 * With tracing on, each attempt is the root span of a trace of its own (the worker runs
 * outside any request) and the request carries its W3C `traceparent`, so a receiver that
 * traces can join it. The span records the host and port, never the URL (its path or
 * query may hold the receiver's own secret), and the answer's status.
 */
export function sendWebhook(url: URL, headers: Record<string, string>, body: string, options: SendOptions): Promise<SendResult> {
  return inRootSpan(
    'POST webhook',
    async (span) => {
      const result = await attempt(url, { ...headers, ...traceContextHeaders() }, body, options);
      if (span) {
        if (result.statusCode !== null) span.setAttribute('http.response.status_code', result.statusCode);
        if (!result.ok) {
          span.setStatus({ code: SpanStatusCode.ERROR });
          span.setAttribute('error.type', result.statusCode === null ? 'network' : String(result.statusCode));
        }
      }
      return result;
    },
    {
      kind: SpanKind.CLIENT,
      attributes: { 'http.request.method': 'POST', 'server.address': url.hostname, 'server.port': Number(url.port) || (url.protocol === 'https:' ? 443 : 80) },
    },
  );
}

async function attempt(url: URL, headers: Record<string, string>, body: string, options: SendOptions): Promise<SendResult> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  const timeoutMs = options.timeoutMs ?? DELIVERY_TIMEOUT_SECONDS * 1000;
  const timedOut = `No complete answer within ${timeoutMs >= 1000 ? `${Math.round(timeoutMs / 1000)} s` : `${timeoutMs} ms`}.`;
  let pinned: { address: string; family: 4 | 6 };
  // The name's resolution counts in the attempt's time too.
  let resolveTimer: NodeJS.Timeout | undefined;
  try {
    pinned = await Promise.race([
      resolveDestination(url, options.policy, options.resolve ?? systemResolver),
      new Promise<never>((_, reject) => {
        resolveTimer = setTimeout(() => reject(new DestinationError(timedOut)), timeoutMs);
      }),
    ]);
  } catch (error) {
    const message = error instanceof DestinationError ? error.message : 'The destination could not be checked.';
    return { ok: false, statusCode: null, durationMs: elapsed(), response: null, error: message };
  } finally {
    clearTimeout(resolveTimer);
  }
  const lookupPinned: LookupFunction = (_hostname, lookupOptions, callback) => {
    if ((lookupOptions as { all?: boolean }).all) (callback as (e: null, a: { address: string; family: number }[]) => void)(null, [pinned]);
    else callback(null, pinned.address, pinned.family);
  };
  const remainingMs = Math.max(1, timeoutMs - elapsed());
  return new Promise<SendResult>((resolve) => {
    let settled = false;
    const finish = (result: Omit<SendResult, 'durationMs'>) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({ ...result, durationMs: elapsed() });
    };
    const request = (url.protocol === 'https:' ? https : http).request(url, {
      method: 'POST',
      agent: false,
      lookup: lookupPinned,
      headers: {
        ...headers,
        'content-type': 'application/json',
        'content-length': String(Buffer.byteLength(body)),
        'user-agent': USER_AGENT,
        connection: 'close',
      },
    });
    const timer = setTimeout(() => {
      finish({ ok: false, statusCode: null, response: null, error: timedOut });
      request.destroy();
    }, remainingMs);
    request.on('error', (error) => {
      finish({ ok: false, statusCode: null, response: null, error: describeNetworkError(error) });
    });
    request.on('response', (response) => {
      const status = response.statusCode ?? 0;
      const chunks: Buffer[] = [];
      let size = 0;
      const done = () => {
        const text = Buffer.concat(chunks).subarray(0, RESPONSE_EXCERPT_BYTES).toString('utf8').replace(/\u0000/g, '');
        const ok = status >= 200 && status < 300;
        const redirect = status >= 300 && status < 400;
        finish({
          ok,
          statusCode: status,
          response: text.length > 0 ? text : null,
          error: ok
            ? null
            : redirect
              ? `Redirects are not followed (HTTP ${status}${response.headers.location ? ` to ${String(response.headers.location).slice(0, 200)}` : ''}): use the final URL.`
              : `HTTP ${status}: expected a 2xx status.`,
        });
        response.destroy();
        request.destroy();
      };
      response.on('data', (chunk: Buffer) => {
        chunks.push(chunk);
        size += chunk.length;
        // Enough to show; the rest of a large answer is never read.
        if (size >= RESPONSE_EXCERPT_BYTES) done();
      });
      response.on('end', done);
      response.on('error', done);
      response.on('aborted', done);
    });
    request.end(body);
  });
}

function describeNetworkError(error: Error & { code?: string }): string {
  switch (error.code) {
    case 'ECONNREFUSED':
      return 'Connection refused.';
    case 'ECONNRESET':
      return 'The connection was reset before an answer came.';
    case 'ETIMEDOUT':
    case 'ENETUNREACH':
    case 'EHOSTUNREACH':
      return 'The host could not be reached.';
    case 'EPROTO':
    case 'ERR_SSL_WRONG_VERSION_NUMBER':
      return 'TLS handshake failed (is the port serving https?).';
    default:
      if (error.code?.startsWith('ERR_TLS') || /certificate|self.signed|CERT_/i.test(`${error.code} ${error.message}`)) {
        return `TLS certificate not accepted (${error.code ?? 'invalid certificate'}).`;
      }
      return `The request failed (${error.code ?? 'network error'}).`;
  }
}
