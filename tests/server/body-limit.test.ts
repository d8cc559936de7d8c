import { describe, expect, it, vi } from 'vitest';
import { INTERNAL_BODY_LIMIT, readBoundedBody } from '@/server/http/body';
import { NextRequest } from 'next/server';
import { config as proxyConfig, proxy } from '../../proxy';

/**
 * The body cap of the app's own endpoints (issue 17): a body over 100 KiB is a 413 before
 * it is read in full. /api/trpc and /api/auth read through readBoundedBody; server
 * actions are refused by proxy.ts's matcher on Content-Length. The running build is
 * checked by e2e/security-web.spec.ts.
 */
vi.mock('@/server/auth/session', () => ({ currentUser: async () => ({ id: '00000000-0000-4000-8000-000000000001', email: 'a@example.com', name: null }) }));
const { handleAppTrpcRequest } = await import('@/server/trpc/app-handler');

/** A chunked body (no Content-Length) of `total` bytes, counting how much was pulled from it. */
function chunkedBody(total: number) {
  const pulled = { bytes: 0 };
  const chunk = new Uint8Array(16 * 1024).fill(0x61);
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (pulled.bytes >= total) return controller.close();
      pulled.bytes += chunk.byteLength;
      controller.enqueue(chunk);
    },
  });
  return { stream, pulled };
}

const post = (body: BodyInit, headers: Record<string, string> = {}) =>
  new Request('http://localhost:3000/api/trpc/apiKeys.create', {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body,
    duplex: 'half',
  } as RequestInit);

describe('readBoundedBody', () => {
  it('refuses a declared Content-Length over 100 KiB without reading', async () => {
    const { stream, pulled } = chunkedBody(50 * 1024 * 1024);
    const res = await readBoundedBody(post(stream, { 'content-length': String(50 * 1024 * 1024) }));
    expect(res).toBeInstanceOf(Response);
    expect((res as Response).status).toBe(413);
    expect(pulled.bytes).toBeLessThanOrEqual(64 * 1024);
  });

  it('stops reading a chunked body as soon as it passes 100 KiB', async () => {
    const { stream, pulled } = chunkedBody(50 * 1024 * 1024);
    const res = await readBoundedBody(post(stream));
    expect((res as Response).status).toBe(413);
    expect(pulled.bytes).toBeLessThan(INTERNAL_BODY_LIMIT + 64 * 1024);
  });

  it('passes a body up to the limit, byte for byte', async () => {
    const body = 'x'.repeat(INTERNAL_BODY_LIMIT);
    const read = await readBoundedBody(post(body));
    expect(Buffer.from(read as Uint8Array).toString()).toBe(body);
    expect(((await readBoundedBody(post(body + 'x'))) as Response).status).toBe(413);
  });

  it('answers the 413 in the error envelope, with the message, no-store and the connection closed', async () => {
    const res = (await readBoundedBody(post('x'.repeat(INTERNAL_BODY_LIMIT + 1)))) as Response;
    expect(res.status).toBe(413);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.headers.get('connection')).toBe('close');
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    const requestId = res.headers.get('x-request-id');
    expect(await res.json()).toEqual({
      success: false,
      error: { code: 'payload_too_large', message: `The request body is larger than ${INTERNAL_BODY_LIMIT} bytes.`, details: [{ param: 'body', message: `At most ${INTERNAL_BODY_LIMIT} bytes.` }] },
      request_id: requestId,
    });
  });
});

describe('/api/trpc', () => {
  it('answers 413 to 50 MB, declared or chunked, and reads at most about 100 KiB of it', async () => {
    for (const declared of [true, false]) {
      const { stream, pulled } = chunkedBody(50 * 1024 * 1024);
      const res = await handleAppTrpcRequest(post(stream, declared ? { 'content-length': String(50 * 1024 * 1024) } : {}));
      expect(res.status, declared ? 'declared' : 'chunked').toBe(413);
      expect(pulled.bytes).toBeLessThan(INTERNAL_BODY_LIMIT + 64 * 1024);
      expect(((await res.json()) as { request_id: string }).request_id).toBe(res.headers.get('x-request-id'));
    }
  });
});

describe("proxy.ts's matcher (server actions)", () => {
  const [matcher, unknownLength] = proxyConfig.matcher;
  const over = new RegExp(`^${(matcher!.has[0] as { value: string }).value}$`);

  it('matches exactly the Content-Lengths above INTERNAL_BODY_LIMIT', () => {
    const limit = INTERNAL_BODY_LIMIT;
    for (let n = 0; n <= 2_000_000; n += n < limit - 1000 ? 997 : n < limit + 1000 ? 1 : 4999) {
      expect(over.test(String(n)), String(n)).toBe(n > limit);
    }
    for (const n of [limit, limit + 1, 10 ** 7, 10 ** 12, 5 * 10 ** 7]) expect(over.test(String(n)), String(n)).toBe(n > limit);
    expect(over.test('000102401')).toBe(true);
    expect(over.test('000102400')).toBe(false);
  });

  it('covers pages, not the API routes (they cap their own bodies without the proxy)', () => {
    const source = new RegExp(`^${matcher!.source.replace('/((?!api/).*)', '/((?!api/).*)')}$`);
    expect(source.test('/sign-in')).toBe(true);
    expect(source.test('/settings/sessions')).toBe(true);
    expect(source.test('/')).toBe(true);
    expect(source.test('/api/trpc/apiKeys.create')).toBe(false);
  });

  it('also takes a page request with Transfer-Encoding and no Content-Length (a chunked action body), on the same paths', () => {
    expect(unknownLength!.source).toBe(matcher!.source);
    expect(unknownLength!.has).toEqual([{ type: 'header', key: 'transfer-encoding' }]);
    expect((unknownLength as { missing?: unknown }).missing).toEqual([{ type: 'header', key: 'content-length' }]);
  });

  it('answers 411 to a body of undeclared length and 413 to a declared one, both JSON and no-store', async () => {
    const request = (headers: Record<string, string>) => new NextRequest('http://localhost:3000/sign-in', { method: 'POST', headers });
    const cases: { headers: Record<string, string>; status: number; message: string }[] = [
      { headers: { 'transfer-encoding': 'chunked' }, status: 411, message: 'A request body needs a Content-Length header.' },
      { headers: { 'content-length': String(50 * 1024 * 1024) }, status: 413, message: 'The request body is larger than 102400 bytes.' },
    ];
    for (const { headers, status, message } of cases) {
      const res = proxy(request(headers));
      expect(res.status).toBe(status);
      expect(res.headers.get('cache-control')).toBe('no-store');
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      expect(await res.json()).toEqual({ error: { message } });
    }
  });
});
