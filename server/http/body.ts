import { AppError } from '@/server/errors';
import { apiHeaders, errorResponse, newRequestId } from './responses';

export interface BodyTimeout {
  /** How long the whole body may take to arrive; past it the request is a 408. */
  ms: number;
  /** Wraps each wait for the client (RequestContext.waitForClient: the request deadline does not count it). */
  wait?: <T>(wait: Promise<T>) => Promise<T>;
}

/**
 * A request body read as text, refusing more than `limit` bytes whatever Content-Length
 * claims: a declared size over the limit is refused before anything is read, and an
 * undeclared (chunked) body is cut off at the limit. With `timeout`, a body that has not
 * arrived in full within `timeout.ms` is a 408 (the client's slowness, not the server's).
 */
export async function readBodyText(
  req: Request,
  limit: number,
  tooLarge: () => AppError = () => bodyTooLarge(limit),
  timeout?: BodyTimeout,
): Promise<string> {
  const declared = Number(req.headers.get('content-length') ?? 0);
  if (declared > limit) throw tooLarge();
  if (!req.body) return '';
  const reader = req.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  const giveUpAt = timeout ? performance.now() + timeout.ms : Infinity;
  const wait = timeout?.wait ?? (<T>(p: Promise<T>) => p);
  for (;;) {
    const { done, value } = await wait(readBefore(reader, giveUpAt, timeout?.ms ?? 0));
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel();
      throw tooLarge();
    }
    chunks.push(value);
  }
  return new TextDecoder('utf-8', { fatal: false }).decode(Buffer.concat(chunks));
}

/** One read of the body, or a 408 once `giveUpAt` has passed (the rest of the body is then cancelled). */
async function readBefore(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  giveUpAt: number,
  ms: number,
): Promise<ReadableStreamReadResult<Uint8Array>> {
  if (giveUpAt === Infinity) return reader.read();
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => {
    timer = setTimeout(resolve, Math.max(0, giveUpAt - performance.now()), 'late');
  });
  const read = reader.read();
  try {
    const result = await Promise.race([read, late]);
    if (result !== 'late') return result;
  } finally {
    clearTimeout(timer);
  }
  // The pending read settles when the stream is cancelled; nothing waits for it.
  read.catch(() => {});
  reader.cancel().catch(() => {});
  throw bodyTimeout(ms);
}

export function bodyTimeout(ms: number): AppError {
  const seconds = Math.max(1, Math.round(ms / 1000));
  return new AppError('request_timeout', `The request body did not arrive within ${seconds} seconds.`, [
    { param: 'body', message: `Send the whole body within ${seconds} seconds.` },
  ]);
}

export function bodyTooLarge(limit: number): AppError {
  return new AppError('payload_too_large', `The request body is larger than ${limit} bytes.`, [{ param: 'body', message: `At most ${limit} bytes.` }]);
}

/** A JSON body: empty means undefined; text that is not JSON is a 400. */
export function parseJsonBody(text: string, example: string): unknown {
  if (text.trim() === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    throw new AppError('invalid_request', 'The request body is not valid JSON.', [{ param: 'body', message: `Expected a JSON object such as ${example}.` }]);
  }
}

/**
 * The largest body the app's own endpoints take (/api/trpc, /api/auth/*, server actions):
 * their forms and mutations are a few KiB. The public API has its own, smaller limit.
 */
export const INTERNAL_BODY_LIMIT = 100 * 1024;

/**
 * The 413 of the internal endpoints (the pages never send that much; a client that does
 * gets no more): bodyTooLarge's error in the envelope, and the connection closed.
 */
export function internalBodyTooLarge(limit = INTERNAL_BODY_LIMIT, requestId = newRequestId()): Response {
  const headers = apiHeaders(requestId);
  headers.set('Connection', 'close');
  return errorResponse(bodyTooLarge(limit), requestId, headers);
}

/**
 * The body of a request to an internal endpoint, read into memory only up to `limit`
 * bytes: a declared Content-Length over it is refused before anything is read, a chunked
 * body as soon as it passes the limit. Undefined when there is no body; a 413 Response
 * (under `requestId` when given) when there is too much.
 */
export async function readBoundedBody(req: Request, limit = INTERNAL_BODY_LIMIT, requestId?: string): Promise<Uint8Array | undefined | Response> {
  if (Number(req.headers.get('content-length') ?? 0) > limit) return internalBodyTooLarge(limit, requestId);
  if (!req.body || req.method === 'GET' || req.method === 'HEAD') return undefined;
  const reader = req.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel();
      return internalBodyTooLarge(limit, requestId);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks);
}
