import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { DatabaseHandle } from '@/db/client';
import { ConfigError, parseConfig } from '@/server/config';
import { setProcessDatabase } from '@/server/database';
import { errorEnvelopeSchema } from '@/server/errors';
import { withinDeadline } from '@/server/http/deadline';
import { newRequestId } from '@/server/http/responses';
import { apiRoutes, handleApiRequest } from '@/server/rest/router';
import { configureForFile } from '../helpers/config';
import { captureLogs, type CapturedLogs } from '../helpers/logs';

/**
 * The per-request deadline of the API (server/http/deadline.ts). Its effect on a real
 * database that goes silent is in tests/reliability/database-faults.test.ts.
 */

configureForFile({ REQUEST_DEADLINE_MS: '150' });

// The routes' handlers, replaced by ones that never answer.
const hang = vi.hoisted(() => ({ calls: 0 }));
const never = () => {
  hang.calls++;
  return new Promise<Response>(() => {});
};
vi.mock('@/server/rest/json-operations', () => ({ jsonOperation: () => () => never() }));
vi.mock('@/server/rest/export', () => ({ serveExport: () => never() }));
vi.mock('@/server/rest/calendar-feed', async (importOriginal) => ({ ...(await importOriginal<object>()), serveCalendarFeed: () => never() }));
vi.mock('@/server/rest/document', () => ({ serveDocument: () => never() }));

// The hanging handlers never touch the database: a stand-in keeps the router from opening one.
beforeAll(() => setProcessDatabase({ db: {} } as DatabaseHandle));

/** The deadline of one request, with its own request id. */
const deadline = (work: () => Promise<Response>, ms: number) => withinDeadline(work, newRequestId(), ms);

let logs: CapturedLogs | undefined;
let logged: { level: string; msg: string; request_id?: string; deadline_ms?: unknown }[] = [];
afterEach(() => {
  vi.restoreAllMocks();
  logs?.restore();
  logs = undefined;
  logged = [];
});
function captureErrors() {
  logs = captureLogs();
  logged = logs.entries;
}

async function expectDeadlineAnswer(res: Response, elapsedMs: number, deadlineMs: number) {
  expect(res.status).toBe(503);
  expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
  expect(res.headers.get('retry-after')).toBe('5');
  expect(res.headers.get('cache-control')).toBe('no-store');
  expect(res.headers.get('x-content-type-options')).toBe('nosniff');
  const body = await res.json();
  expect(errorEnvelopeSchema.safeParse(body).success).toBe(true);
  expect(body.error.code).toBe('service_unavailable');
  expect(body.request_id).toMatch(/^req_[0-9a-f]{32}$/);
  expect(res.headers.get('x-request-id')).toBe(body.request_id);
  expect(elapsedMs).toBeGreaterThanOrEqual(deadlineMs - 5);
  expect(elapsedMs).toBeLessThan(deadlineMs + 1_000);
  expect(logged.map(({ level, msg, request_id, deadline_ms }) => ({ level, msg, request_id, deadline_ms }))).toEqual([
    { level: 'error', msg: 'request deadline passed: answered 503', request_id: body.request_id, deadline_ms: deadlineMs },
  ]);
}

describe('withinDeadline', () => {
  it('answers 503 service_unavailable with Retry-After at the deadline when the handler never answers', async () => {
    captureErrors();
    const started = performance.now();
    const res = await deadline(() => new Promise<Response>(() => {}), 100);
    await expectDeadlineAnswer(res, performance.now() - started, 100);
  });

  it('passes an answer in time through untouched, and logs nothing', async () => {
    captureErrors();
    const original = new Response('{"success":true}', { status: 201, headers: { 'X-Custom': 'kept' } });
    const res = await deadline(async () => original, 1_000);
    expect(res).toBe(original);
    expect(logged).toEqual([]);
  });

  it("passes the handler's failure through unchanged (it is the handler's to answer)", async () => {
    const failure = new Error('boom');
    await expect(deadline(async () => Promise.reject(failure), 1_000)).rejects.toBe(failure);
    const sync = (() => {
      throw failure;
    }) as unknown as () => Promise<Response>;
    await expect(deadline(sync, 1_000)).rejects.toBe(failure);
  });

  it('drops a late Response: its body is cancelled, so a stream stops reading', async () => {
    captureErrors();
    let cancelled: unknown = 'not cancelled';
    let answer!: (res: Response) => void;
    const late = new Promise<Response>((resolve) => (answer = resolve));
    const res = await deadline(() => late, 50);
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
      expect((await deadline(() => late, 20)).status).toBe(503);
      fail(new Error('late failure'));
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(unhandled).toEqual([]);
      expect(logged).toHaveLength(1);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });
});

/** A path of the route table made concrete: each {parameter} replaced by a sample value. */
const SAMPLE_PARAMETERS: Record<string, string> = { id: '3f2b6c1e-8a4d-4c2e-9b7a-0d1e2f3a4b5c', token: 'cdcal_x' };
const concrete = (path: string) => path.replace(/\{([^}]+)\}/g, (_, name: string) => SAMPLE_PARAMETERS[name] ?? 'x');

// Every method of every route the router serves (server/rest/router.ts's table, HEAD
// included), so that a new route cannot be left out.
const ROUTE_CASES = apiRoutes().flatMap((route) => route.methods.map((method) => [method, concrete(route.path)] as const));

describe('every route of the API is bounded (REQUEST_DEADLINE_MS=150)', () => {
  it('the cases are the route table', () => {
    expect(ROUTE_CASES).toContainEqual(['GET', '/contracts']);
    expect(ROUTE_CASES).toContainEqual(['POST', '/contracts/export']);
    expect(ROUTE_CASES).toContainEqual(['HEAD', '/calendar/cdcal_x.ics']);
  });

  it.each(ROUTE_CASES)('%s %s answers 503 when its handler hangs', async (method, path) => {
    captureErrors();
    const calls = hang.calls;
    const started = performance.now();
    const res = await handleApiRequest(new Request(`http://localhost/api/v1${path}`, { method }));
    const elapsed = performance.now() - started;
    expect(hang.calls).toBe(calls + 1);
    if (method === 'HEAD') {
      expect(res.status).toBe(503);
      expect(await res.text()).toBe('');
      expect(res.headers.get('retry-after')).toBe('5');
    } else {
      await expectDeadlineAnswer(res, elapsed, 150);
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
