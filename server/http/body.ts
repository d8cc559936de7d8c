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
