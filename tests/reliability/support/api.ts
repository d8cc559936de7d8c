import { randomBytes } from 'node:crypto';
import { handleExportRequest } from '@/server/rest/export-handler';
import { handleRestRequest } from '@/server/rest/openapi-handler';

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
  const text = await res.text();
  // A HEAD answer has the headers of the GET answer and no body.
  const isJson = res.headers.get('content-type')?.startsWith('application/json') && req.method !== 'HEAD';
  const json = isJson ? JSON.parse(text) : undefined;
  return { status: res.status, headers: res.headers, text, json, ms: performance.now() - started };
}

/** The handler the App Router would call for this request. */
export function dispatch(req: Request): Promise<Response> {
  const path = new URL(req.url).pathname;
  return path === `${V1}/contracts/export` ? handleExportRequest(req) : handleRestRequest(req);
}

/**
 * This test file's client address (X-Real-IP, as a proxy would set it). Failed keys are
 * limited per address, and an address out of failures gets 429 even with a valid key;
 * with REDIS_URL every test file counts in the same Redis, so each file has an address of
 * its own instead of sharing "unknown" with the others.
 */
export const CLIENT_ADDRESS = `test-client-${process.pid}-${randomBytes(4).toString('hex')}`;

export function apiRequest(
  method: string,
  pathAndQuery: string,
  options: { key?: string | null; body?: string; headers?: Record<string, string> } = {},
): Request {
  const headers = new Headers(options.headers);
  if (!headers.has('x-real-ip') && !headers.has('x-forwarded-for')) headers.set('X-Real-IP', CLIENT_ADDRESS);
  if (options.key) headers.set('X-API-Key', options.key);
  return new Request(`${BASE}${V1}${pathAndQuery}`, { method, headers, body: options.body });
}

export type ErrorJson = {
  success: false;
  error: { code: string; message: string; details: { param?: string; message: string }[] };
  request_id: string;
};
