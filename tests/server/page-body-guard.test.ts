import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { INTERNAL_BODY_LIMIT } from '@/server/http/body';
import { installPageBodyGuard, pageBodyRefusal } from '@/server/http/page-body-guard';
import { config as proxyConfig } from '../../proxy';

/**
 * The guard in front of Next.js (server/http/page-body-guard.ts) on a real Node HTTP
 * server and a raw TCP client: a page POST declaring 5 MiB, or chunked, is answered while
 * the client has sent only its headers and the first part of the body; the rest is never
 * needed. e2e/security-web.spec.ts does the same against the production build.
 */

const MIB5 = 5 * 1024 * 1024;
let server: http.Server;
let port: number;
/** Requests the app's handler saw, with how many body bytes it read. */
const seen: { url: string; bytes: number }[] = [];

beforeAll(async () => {
  installPageBodyGuard();
  installPageBodyGuard(); // a second call wraps nothing twice
  server = http.createServer((req, res) => {
    let bytes = 0;
    req.on('data', (chunk: Buffer) => (bytes += chunk.length));
    req.on('end', () => {
      seen.push({ url: req.url ?? '', bytes });
      res.end(`read ${bytes}`);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

/**
 * Sends the request head and `first` bytes of body, then waits (sending nothing more) up
 * to `waitMs` for the status line. Resolves the status (0 if none came) and the time.
 */
function headThenWait(head: string, first: Buffer, waitMs = 5_000): Promise<{ status: number; ms: number; answer: string }> {
  return new Promise((resolve) => {
    const started = performance.now();
    const socket = net.connect(port, '127.0.0.1');
    let answer = '';
    const finish = (status: number) => {
      clearTimeout(timer);
      socket.destroy();
      resolve({ status, ms: performance.now() - started, answer });
    };
    const timer = setTimeout(() => finish(0), waitMs);
    socket.on('data', (chunk) => {
      answer += chunk.toString('latin1');
      const match = /^HTTP\/1\.1 (\d{3})[^\r]*\r\n[\s\S]*?\r\n\r\n[\s\S]*\}$/.exec(answer);
      if (match) finish(Number(match[1]));
    });
    socket.on('error', () => {});
    socket.on('close', () => finish(Number(/^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1] ?? 0)));
    socket.write(head);
    socket.write(first);
  });
}

describe('pageBodyRefusal: the same rule as proxy.ts', () => {
  it('refuses a declared length above the limit and an undeclared one on pages, never on /api/', () => {
    for (const n of [0, 1, INTERNAL_BODY_LIMIT - 1, INTERNAL_BODY_LIMIT, INTERNAL_BODY_LIMIT + 1, MIB5, 10 ** 12]) {
      const refusal = pageBodyRefusal('/sign-in', { 'content-length': String(n) });
      expect(refusal?.status ?? null, String(n)).toBe(n > INTERNAL_BODY_LIMIT ? 413 : null);
      // proxy.ts's matcher agrees on every one of them.
      const over = new RegExp(`^(?:${(proxyConfig.matcher[0]!.has![0] as { value: string }).value})$`);
      expect(over.test(String(n)), String(n)).toBe(n > INTERNAL_BODY_LIMIT);
    }
    expect(pageBodyRefusal('/sign-up?callbackUrl=%2F', { 'transfer-encoding': 'chunked' })?.status).toBe(411);
    expect(pageBodyRefusal('http://localhost/settings/account', { 'content-length': String(MIB5) })?.status).toBe(413);
    expect(pageBodyRefusal('/api/trpc/apiKeys.create', { 'content-length': String(MIB5) })).toBeNull();
    expect(pageBodyRefusal('/api/auth/callback/credentials', { 'transfer-encoding': 'chunked' })).toBeNull();
    expect(pageBodyRefusal('/sign-in', {})).toBeNull();
  });
});

describe('installPageBodyGuard on a real server', () => {
  it('answers a page POST declaring 5 MiB with 413 while the client is still holding back all but 64 KiB', async () => {
    const head = `POST /sign-in HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: text/plain\r\nNext-Action: ${'0'.repeat(42)}\r\nContent-Length: ${MIB5}\r\n\r\n`;
    const { status, ms, answer } = await headThenWait(head, Buffer.alloc(64 * 1024, 0x61));
    expect(status).toBe(413);
    expect(ms).toBeLessThan(2_000);
    expect(answer).toMatch(/\r\nconnection: close\r\n/i);
    expect(answer).toMatch(/\r\ncache-control: no-store\r\n/i);
    expect(answer).toContain('{"error":{"message":"The request body is larger than 102400 bytes."}}');
    expect(seen.find((s) => s.url === '/sign-in')).toBeUndefined();
  });

  it('answers a chunked page POST with 411 after its first chunk, the last one never sent', async () => {
    const head = 'POST /sign-up HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n';
    const chunk = Buffer.concat([Buffer.from('10000\r\n'), Buffer.alloc(0x10000, 0x61), Buffer.from('\r\n')]);
    const { status, ms, answer } = await headThenWait(head, chunk);
    expect(status).toBe(411);
    expect(ms).toBeLessThan(2_000);
    expect(answer).toContain('A request body needs a Content-Length header.');
    expect(seen.find((s) => s.url === '/sign-up')).toBeUndefined();
  });

  it('lets an ordinary page POST and a large /api/ body through to the handler', async () => {
    const small = await fetch(`http://127.0.0.1:${port}/settings/account`, { method: 'POST', body: 'x'.repeat(2_000) });
    expect(await small.text()).toBe('read 2000');
    const api = await fetch(`http://127.0.0.1:${port}/api/trpc/x`, { method: 'POST', body: 'y'.repeat(INTERNAL_BODY_LIMIT + 10) });
    expect(await api.text()).toBe(`read ${INTERNAL_BODY_LIMIT + 10}`);
  });
});
