/**
 * Refuses a page POST (a server action: sign-in, sign-up, the settings forms) whose body is
 * too large, or of unknown length, the moment its headers arrive, before any of the body
 * is read.
 *
 * proxy.ts makes the same decision, but Next.js 16 cannot act on it in time: it hands the
 * proxy a copy of the body and, whatever the proxy answers, waits for the whole body to
 * arrive (next-server.js `finalize()` awaits the request's `end`; past
 * `experimental.proxyClientMaxBodySize` the rest is read and discarded, not refused). A
 * client declaring 5 MiB, or sending chunks without end, was read to its end (or to Node's
 * `requestTimeout`, 300 s) before the 413 or 411 left.
 *
 * So the decision also runs one step earlier, where Node's HTTP server hands the request
 * to Next.js ('request' event): `installPageBodyGuard` wraps `http.Server.prototype.emit`
 * once, at server start (instrumentation.ts). A refused request never reaches Next.js; the
 * answer says `Connection: close`, and Node closes the connection once it is written, so
 * at most what was already in flight is read. proxy.ts stays: on a host whose server is
 * not Node's (Vercel's functions, whose platform caps bodies at 4.5 MB itself) it is the
 * refusal. docs/security.md, row 11a.
 */
import http from 'node:http';
import { INTERNAL_BODY_LIMIT } from './body';

export interface PageBodyRefusal {
  status: 411 | 413;
  message: string;
}

/** The path of a request target: origin form (`/a?b`) or absolute form (`http://h/a`). */
function pathOf(target: string): string | null {
  if (target.startsWith('/')) return target.split('?', 1)[0]!;
  try {
    return new URL(target).pathname;
  } catch {
    return null;
  }
}

/**
 * The answer for a request whose body a page may not take, or null to let it through: the
 * same rule as proxy.ts's matcher (paths outside /api/, whose routes cap their own bodies;
 * a Content-Length above INTERNAL_BODY_LIMIT is a 413; a Transfer-Encoding without a
 * Content-Length is a 411).
 */
export function pageBodyRefusal(target: string | undefined, headers: http.IncomingHttpHeaders): PageBodyRefusal | null {
  const path = pathOf(target ?? '/');
  if (path === null || path.startsWith('/api/')) return null;
  const length = headers['content-length'];
  if (length === undefined) {
    return headers['transfer-encoding'] === undefined
      ? null
      : { status: 411, message: 'A request body needs a Content-Length header.' };
  }
  // Node's parser has already refused a Content-Length that is not a number.
  if (/^\d+$/.test(length) && Number(length) > INTERNAL_BODY_LIMIT) {
    return { status: 413, message: `The request body is larger than ${INTERNAL_BODY_LIMIT} bytes.` };
  }
  return null;
}

/** Answers a refused request without reading its body, and closes the connection after it. */
function refuse(res: http.ServerResponse, refusal: PageBodyRefusal): void {
  const body = JSON.stringify({ error: { message: refusal.message } });
  res.shouldKeepAlive = false;
  res.writeHead(refusal.status, {
    'Content-Type': 'application/json',
    'Content-Length': Buffer.byteLength(body),
    'Cache-Control': 'no-store',
    'X-Content-Type-Options': 'nosniff',
    Connection: 'close',
  });
  res.end(body);
}

const INSTALLED = Symbol.for('contract-data-api.pageBodyGuard');

/** Wraps the 'request' event of every Node HTTP server of this process (once; later calls do nothing). */
export function installPageBodyGuard(): void {
  const proto = http.Server.prototype as http.Server & { [INSTALLED]?: true };
  if (proto[INSTALLED]) return;
  proto[INSTALLED] = true;
  const emit = proto.emit;
  proto.emit = function guardedEmit(this: http.Server, event: string | symbol, ...args: unknown[]): boolean {
    if (event === 'request') {
      const [req, res] = args as [http.IncomingMessage, http.ServerResponse];
      const refusal = pageBodyRefusal(req.url, req.headers);
      if (refusal) {
        refuse(res, refusal);
        return true;
      }
    }
    return (emit as (this: http.Server, event: string | symbol, ...args: unknown[]) => boolean).call(this, event, ...args);
  } as typeof proto.emit;
}
