import { AppError } from '@/server/errors';

/**
 * A request body read as text, refusing more than `limit` bytes whatever Content-Length
 * claims: a declared size over the limit is refused before anything is read, and an
 * undeclared (chunked) body is cut off at the limit.
 */
export async function readBodyText(req: Request, limit: number, tooLarge: () => AppError = () => bodyTooLarge(limit)): Promise<string> {
  const declared = Number(req.headers.get('content-length') ?? 0);
  if (declared > limit) throw tooLarge();
  if (!req.body) return '';
  const reader = req.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
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

/** The 413 of the internal endpoints (the pages never send that much; a client that does gets no more). */
export function internalBodyTooLarge(limit = INTERNAL_BODY_LIMIT): Response {
  return Response.json(
    { error: { message: `The request body is larger than ${limit} bytes.` } },
    { status: 413, headers: { 'Cache-Control': 'no-store', Connection: 'close' } },
  );
}

/**
 * The body of a request to an internal endpoint, read into memory only up to `limit`
 * bytes: a declared Content-Length over it is refused before anything is read, a chunked
 * body as soon as it passes the limit. Undefined when there is no body; a 413 Response
 * when there is too much.
 */
export async function readBoundedBody(req: Request, limit = INTERNAL_BODY_LIMIT): Promise<Uint8Array | undefined | Response> {
  if (Number(req.headers.get('content-length') ?? 0) > limit) return internalBodyTooLarge(limit);
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
      return internalBodyTooLarge(limit);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks);
}
