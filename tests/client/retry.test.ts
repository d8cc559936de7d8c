import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createContractDataClient, retryAfterSeconds } from '@/clients/typescript/src/index';

/**
 * The typed client's waiting out of 429/503 (clients/typescript/src/retry.ts), over real
 * HTTP against a small server that answers from a script of statuses.
 */

describe('retryAfterSeconds', () => {
  it('reads delay-seconds and HTTP dates, and nothing else', () => {
    expect(retryAfterSeconds('7')).toBe(7);
    expect(retryAfterSeconds(' 0 ')).toBe(0);
    const now = Date.parse('2026-11-24T12:00:00Z');
    expect(retryAfterSeconds('Tue, 24 Nov 2026 12:00:30 GMT', now)).toBe(30);
    expect(retryAfterSeconds('Tue, 24 Nov 2026 11:00:00 GMT', now)).toBe(0);
    expect(retryAfterSeconds(null)).toBeUndefined();
    expect(retryAfterSeconds('soon')).toBeUndefined();
    expect(retryAfterSeconds('-1')).toBeUndefined();
  });
});

describe('the client waits out 429 and 503', () => {
  /** Statuses to answer, in order (then 200); each answer records what it received. */
  let script: { status: number; retryAfter?: string }[] = [];
  const received: { at: number; method: string; body: string; key: string | undefined }[] = [];
  let server: http.Server;
  let baseUrl = '';

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      let body = '';
      req.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
      req.on('end', () => {
        received.push({ at: Date.now(), method: req.method!, body, key: req.headers['x-api-key'] as string | undefined });
        const next = script.shift() ?? { status: 200 };
        const headers: Record<string, string> = { 'Content-Type': 'application/json', 'X-Request-Id': `req_${received.length}` };
        if (next.retryAfter !== undefined) headers['Retry-After'] = next.retryAfter;
        const ok = next.status === 200;
        res.writeHead(next.status, headers);
        res.end(
          JSON.stringify(
            ok
              ? { success: true, data: { contracts: [], pagination: { limit: 1, offset: 0, total: 0 } } }
              : { success: false, error: { code: next.status === 429 ? 'rate_limited' : 'service_unavailable', message: 'wait', details: [] }, request_id: `req_${received.length}` },
          ),
        );
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const reset = (statuses: typeof script) => {
    script = statuses;
    received.length = 0;
  };

  it('retries after Retry-After seconds and returns the answer that succeeded', async () => {
    reset([{ status: 429, retryAfter: '1' }, { status: 503, retryAfter: '0' }]);
    const waits: number[] = [];
    const client = createContractDataClient({ baseUrl, apiKey: 'cdapi_test', retry: { onRetry: (info) => waits.push(info.waitSeconds) } });
    const { data, error } = await client.GET('/contracts');
    expect(error).toBeUndefined();
    expect(data?.success).toBe(true);
    expect(waits).toEqual([1, 0]);
    expect(received).toHaveLength(3);
    expect(received[1]!.at - received[0]!.at).toBeGreaterThanOrEqual(950);
    expect(received.every((r) => r.key === 'cdapi_test')).toBe(true);
  });

  it('sends the request body again on every attempt', async () => {
    reset([{ status: 429, retryAfter: '0' }]);
    const client = createContractDataClient({ baseUrl, apiKey: 'cdapi_test' });
    await client.POST('/contracts/export', { body: { bom: true }, parseAs: 'text' });
    expect(received.map((r) => [r.method, r.body])).toEqual([
      ['POST', '{"bom":true}'],
      ['POST', '{"bom":true}'],
    ]);
  });

  it('gives the 429 back after maxRetries, when the wait is too long, without Retry-After, or when turned off', async () => {
    reset([{ status: 429, retryAfter: '0' }, { status: 429, retryAfter: '0' }, { status: 429, retryAfter: '0' }]);
    const limited = await createContractDataClient({ baseUrl, retry: { maxRetries: 2 } }).GET('/contracts');
    expect(limited.response.status).toBe(429);
    expect(limited.error?.error.code).toBe('rate_limited');
    expect(received).toHaveLength(3);

    reset([{ status: 429, retryAfter: '3600' }]);
    const started = Date.now();
    const long = await createContractDataClient({ baseUrl }).GET('/contracts');
    expect(long.response.status).toBe(429);
    expect(Date.now() - started).toBeLessThan(1000);
    expect(received).toHaveLength(1);

    reset([{ status: 429 }]);
    expect((await createContractDataClient({ baseUrl }).GET('/contracts')).response.status).toBe(429);
    expect(received).toHaveLength(1);

    reset([{ status: 429, retryAfter: '0' }]);
    expect((await createContractDataClient({ baseUrl, retry: false }).GET('/contracts')).response.status).toBe(429);
    expect(received).toHaveLength(1);
  });

  it('stops waiting when the request is aborted', async () => {
    reset([{ status: 429, retryAfter: '30' }]);
    const client = createContractDataClient({ baseUrl });
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error('cancelled by the caller')), 200);
    const started = Date.now();
    await expect(client.GET('/contracts', { signal: controller.signal })).rejects.toThrow('cancelled by the caller');
    expect(Date.now() - started).toBeLessThan(5000);
  });
});
