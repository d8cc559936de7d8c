import { randomBytes } from 'node:crypto';
import { handleApiRequest } from '@/server/rest/router';

/**
 * Requests to the API as the App Router hands them to app/api/v1/[[...path]]/route.ts:
 * through the API's own router, with its route table, deadline and error envelope.
 *
 * The suites that use these play the part of a proxy that sets X-Real-IP on every
 * request (as nginx's `proxy_set_header X-Real-IP $remote_addr` does): configure them with
 * PROXY_CLIENT_ADDRESS, or every request would share one failure bucket
 * (server/http/client-address.ts).
 */
export const PROXY_CLIENT_ADDRESS = { CLIENT_ADDRESS_HEADER: 'x-real-ip', TRUSTED_PROXY_HOPS: undefined };

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

/** Sends a Request to the API and reads the whole body. */
export async function send(req: Request): Promise<Answer> {
  const started = performance.now();
  const res = await handleApiRequest(req);
  // Decoded keeping a byte order mark (Response.text() drops it), so tests can see one.
  const text = new TextDecoder('utf-8', { ignoreBOM: true }).decode(await res.arrayBuffer());
  // A HEAD answer has the headers of the GET answer and no body.
  const isJson = res.headers.get('content-type')?.startsWith('application/json') && req.method !== 'HEAD';
  const json = isJson ? JSON.parse(text) : undefined;
  return { status: res.status, headers: res.headers, text, json, ms: performance.now() - started };
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
  options: { key?: string | null; body?: string; headers?: Record<string, string>; clientAddress?: string } = {},
): Request {
  const headers = new Headers(options.headers);
  // The proxy sets X-Real-IP whatever the client sent in X-Forwarded-For.
  if (!headers.has('x-real-ip')) headers.set('X-Real-IP', options.clientAddress ?? CLIENT_ADDRESS);
  if (options.key) headers.set('X-API-Key', options.key);
  return new Request(`${BASE}${V1}${pathAndQuery}`, { method, headers, body: options.body });
}

export type ErrorJson = {
  success: false;
  error: { code: string; message: string; details: { param?: string; message: string }[] };
  request_id: string;
};
