import { randomBytes } from 'node:crypto';
import { handleCalendarFeedRequest } from '@/server/calendar/feed-handler';
import { withRequestDeadline } from '@/server/rest/deadline';
import { handleExportRequest } from '@/server/rest/export-handler';
import { handleRestRequest } from '@/server/rest/openapi-handler';

// These suites play the part of a proxy that sets X-Real-IP on every request (as nginx's
// `proxy_set_header X-Real-IP $remote_addr` does): without a trusted source, every
// request would share one failure bucket (server/rest/client-address.ts). Read on the
// first request, after this module has run.
process.env.CLIENT_ADDRESS_HEADER = 'x-real-ip';
delete process.env.TRUSTED_PROXY_HOPS;

export const BASE = 'http://localhost:3000';
export const V1 = '/api/v1';

export interface Answer {
  status: number;
  headers: Headers;
  text: string;
  json?: unknown;
  /** Wall time of the whole exchange, body included. */
  ms: number;
}

/**
 * Sends a Request to the handler its route exports (as app/api/v1/... does) and reads
 * the whole body.
 */
export async function send(req: Request): Promise<Answer> {
  const started = performance.now();
  const res = await dispatch(req);
  // Decoded keeping a byte order mark (Response.text() drops it), so tests can see one.
  const text = new TextDecoder('utf-8', { ignoreBOM: true }).decode(await res.arrayBuffer());
  // A HEAD answer has the headers of the GET answer and no body.
  const isJson = res.headers.get('content-type')?.startsWith('application/json') && req.method !== 'HEAD';
  const json = isJson ? JSON.parse(text) : undefined;
  return { status: res.status, headers: res.headers, text, json, ms: performance.now() - started };
}

// Wrapped in the request deadline as app/api/v1/**/route.ts wrap them.
const restHandler = withRequestDeadline(handleRestRequest);
const exportHandler = withRequestDeadline(handleExportRequest);
const calendarHandler = withRequestDeadline(handleCalendarFeedRequest);

/** The handler the App Router would call for this request. */
export function dispatch(req: Request): Promise<Response> {
  const path = new URL(req.url).pathname;
  if (path === `${V1}/contracts/export`) return exportHandler(req);
  // app/api/v1/calendar/[file]: one segment below /calendar/ (deeper paths reach the catch-all).
  if (/^\/api\/v1\/calendar\/[^/]+$/.test(path)) return calendarHandler(req);
  return restHandler(req);
}

/**
 * This test file's client address (X-Real-IP, as the proxy would set it). Failed keys are
 * limited per address, and an address out of failures gets 429 even with a valid key;
 * with REDIS_URL every test file counts in the same Redis, so each file has an address of
 * its own instead of sharing one bucket with the others. IPv6 addresses count per /64,
 * so the random part is in the network half (2001:db8::/32 is the documentation range).
 */
export const CLIENT_ADDRESS = `2001:db8:${randomBytes(4).toString('hex').replace(/^(.{4})/, '$1:')}::1`;

export function apiRequest(
  method: string,
  pathAndQuery: string,
  options: { key?: string | null; body?: string; headers?: Record<string, string> } = {},
): Request {
  const headers = new Headers(options.headers);
  // The proxy sets X-Real-IP whatever the client sent in X-Forwarded-For.
  if (!headers.has('x-real-ip')) headers.set('X-Real-IP', CLIENT_ADDRESS);
  if (options.key) headers.set('X-API-Key', options.key);
  return new Request(`${BASE}${V1}${pathAndQuery}`, { method, headers, body: options.body });
}

export type ErrorJson = {
  success: false;
  error: { code: string; message: string; details: { param?: string; message: string }[] };
  request_id: string;
};
