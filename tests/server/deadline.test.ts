import { afterEach, describe, expect, it, vi } from 'vitest';
import { ConfigError, parseConfig } from '@/server/config';
import { errorEnvelope } from '@/server/contracts/schemas';
import { withRequestDeadline } from '@/server/rest/deadline';

/**
 * The per-request deadline of the REST routes (server/rest/deadline.ts). Its effect on a
 * real database that goes silent is in tests/reliability/database-faults.test.ts.
 */

// The routes below read the deadline from the configuration, on their first request.
process.env.REQUEST_DEADLINE_MS = '150';

// The route modules' handlers, replaced by one that never answers.
const hang = vi.hoisted(() => ({ calls: 0 }));
vi.mock('@/server/rest/openapi-handler', async (importOriginal) => ({
  ...(await importOriginal<object>()),
  handleRestRequest: () => {
    hang.calls++;
    return new Promise<Response>(() => {});
  },
}));
vi.mock('@/server/rest/export-handler', () => ({
  handleExportRequest: () => {
    hang.calls++;
    return new Promise<Response>(() => {});
  },
}));

const request = (method = 'GET') => new Request('http://localhost/api/v1/contracts', { method });
const never = () => new Promise<Response>(() => {});

let logged: string[] = [];
afterEach(() => {
  vi.restoreAllMocks();
  logged = [];
});
function captureErrors() {
  vi.spyOn(console, 'error').mockImplementation((...args: unknown[]) => void logged.push(args.map(String).join(' ')));
}

async function expectDeadlineAnswer(res: Response, elapsedMs: number, deadlineMs: number) {
  expect(res.status).toBe(503);
  expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
  expect(res.headers.get('retry-after')).toBe('5');
  expect(res.headers.get('cache-control')).toBe('no-store');
  expect(res.headers.get('x-content-type-options')).toBe('nosniff');
  const body = await res.json();
  expect(errorEnvelope.safeParse(body).success).toBe(true);
  expect(body.error.code).toBe('service_unavailable');
  expect(body.request_id).toMatch(/^req_[0-9a-f]{32}$/);
  expect(res.headers.get('x-request-id')).toBe(body.request_id);
  expect(elapsedMs).toBeGreaterThanOrEqual(deadlineMs - 5);
  expect(elapsedMs).toBeLessThan(deadlineMs + 1_000);
  expect(logged).toEqual([`[${body.request_id}] request deadline of ${deadlineMs} ms passed: answered 503`]);
}

describe('withRequestDeadline', () => {
  it('answers 503 service_unavailable with Retry-After at the deadline when the handler never answers', async () => {
    captureErrors();
    const started = performance.now();
    const res = await withRequestDeadline(never, () => 100)(request());
    await expectDeadlineAnswer(res, performance.now() - started, 100);
  });

  it('passes an answer in time through untouched, and logs nothing', async () => {
    captureErrors();
    const original = new Response('{"success":true}', { status: 201, headers: { 'X-Custom': 'kept' } });
    const handler = vi.fn(async (req: Request) => (req.method === 'POST' ? original : new Response(null, { status: 500 })));
    const req = request('POST');
    const res = await withRequestDeadline(handler, () => 1_000)(req);
    expect(res).toBe(original);
    expect(handler).toHaveBeenCalledWith(req);
    expect(logged).toEqual([]);
  });

  it("passes the handler's failure through unchanged (it is the handler's to answer)", async () => {
    const failure = new Error('boom');
    await expect(withRequestDeadline(async () => Promise.reject(failure), () => 1_000)(request())).rejects.toBe(failure);
    const sync = (() => {
      throw failure;
    }) as unknown as () => Promise<Response>;
    await expect(withRequestDeadline(sync, () => 1_000)(request())).rejects.toBe(failure);
  });

  it('drops a late Response: its body is cancelled, so a stream stops reading', async () => {
    captureErrors();
    let cancelled: unknown = 'not cancelled';
    let answer!: (res: Response) => void;
    const late = new Promise<Response>((resolve) => (answer = resolve));
    const res = await withRequestDeadline(() => late, () => 50)(request());
    expect(res.status).toBe(503);
    const body = new ReadableStream({
      pull() {},
      cancel(reason) {
        cancelled = reason;
      },
    });
    answer(new Response(body));
    await vi.waitFor(() => expect(cancelled).not.toBe('not cancelled'));
  });

  it('a failure after the deadline is neither reported nor left unhandled', async () => {
    captureErrors();
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      let fail!: (error: Error) => void;
      const late = new Promise<Response>((_, reject) => (fail = reject));
      expect((await withRequestDeadline(() => late, () => 20)(request())).status).toBe(503);
      fail(new Error('late failure'));
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(unhandled).toEqual([]);
      expect(logged).toHaveLength(1);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });
});

describe('the REST routes are wrapped (REQUEST_DEADLINE_MS=150)', () => {
  it.each([
    ['/api/v1/{…}', () => import('@/app/api/v1/[...trpc]/route'), ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']],
    ['/api/v1/contracts/export', () => import('@/app/api/v1/contracts/export/route'), ['POST', 'GET', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']],
    ['/api/v1', () => import('@/app/api/v1/route'), ['GET', 'POST', 'PUT', 'PATCH', 'DELETE']],
  ] as const)('%s: every method answers 503 when its handler hangs', async (_path, load, methods) => {
    const route = (await load()) as unknown as Record<string, (req: Request) => Promise<Response>>;
    for (const method of methods) {
      captureErrors();
      const calls = hang.calls;
      const started = performance.now();
      const res = await route[method]!(request(method));
      const elapsed = performance.now() - started;
      expect(hang.calls, method).toBe(calls + 1);
      if (method === 'HEAD') {
        expect(res.status).toBe(503);
        expect(await res.text()).toBe('');
        expect(res.headers.get('retry-after')).toBe('5');
      } else {
        await expectDeadlineAnswer(res, elapsed, 150);
      }
      vi.restoreAllMocks();
      logged = [];
    }
  });
});

describe('REQUEST_DEADLINE_MS', () => {
  it('defaults to 8 seconds and must be a positive whole number', () => {
    expect(parseConfig({}).requestDeadlineMs).toBe(8000);
    expect(parseConfig({ REQUEST_DEADLINE_MS: '2500' }).requestDeadlineMs).toBe(2500);
    for (const bad of ['0', '-1', '8s', '1e4']) {
      expect(() => parseConfig({ REQUEST_DEADLINE_MS: bad })).toThrow(ConfigError);
      expect(() => parseConfig({ REQUEST_DEADLINE_MS: bad })).toThrow('REQUEST_DEADLINE_MS must be a positive whole number');
    }
  });
});
