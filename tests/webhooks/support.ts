import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import type { Database } from '@/db/client';
import { webhookEndpoints, webhookEvents } from '@/db/schema';
import { WebhookWorker, type WorkerOptions } from '@/server/webhooks/worker';
import { createEndpoint, type CreateEndpointInput } from '@/server/webhooks/endpoints';

/**
 * A webhook receiver on a loopback port, as an integrator would run one: it records every
 * request (headers and raw body) and answers with what the test scripts (a status, a
 * delay, a redirect, a large body), 200 by default.
 */
export interface Received {
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
}

export type Reply = { status: number; body?: string; headers?: Record<string, string>; delayMs?: number };

export interface Receiver {
  url: string;
  received: Received[];
  /** Answers, in order, to the next requests; then `fallback`. */
  replies: Reply[];
  fallback: Reply;
  /** Resolves once `count` requests have arrived in all (rejects after `timeoutMs`). */
  waitFor(count: number, timeoutMs?: number): Promise<Received[]>;
  close(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  const received: Received[] = [];
  const waiters: { count: number; resolve: () => void }[] = [];
  const receiver = { received, replies: [] as Reply[], fallback: { status: 200, body: 'ok' } as Reply } as Receiver;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() });
      for (const w of waiters.filter((w) => received.length >= w.count)) w.resolve();
      const reply = receiver.replies.shift() ?? receiver.fallback;
      const answer = () => {
        if (res.destroyed) return;
        res.writeHead(reply.status, { 'content-type': 'text/plain', ...reply.headers });
        res.end(reply.body ?? '');
      };
      if (reply.delayMs) setTimeout(answer, reply.delayMs).unref();
      else answer();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  receiver.url = `http://127.0.0.1:${port}/hooks`;
  receiver.waitFor = (count, timeoutMs = 10_000) =>
    new Promise<Received[]>((resolve, reject) => {
      if (received.length >= count) return resolve(received);
      const timer = setTimeout(() => reject(new Error(`expected ${count} webhook requests, got ${received.length} within ${timeoutMs} ms`)), timeoutMs);
      waiters.push({ count, resolve: () => (clearTimeout(timer), resolve(received)) });
    });
  receiver.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return receiver;
}

/** The receiver's side of Standard Webhooks: the official library verifies and parses. */
export function verify(secret: string, request: Received): { type: string; timestamp: string; data: Record<string, unknown> } {
  const headers = {
    'webhook-id': String(request.headers['webhook-id']),
    'webhook-timestamp': String(request.headers['webhook-timestamp']),
    'webhook-signature': String(request.headers['webhook-signature']),
  };
  return new Webhook(secret).verify(request.body, headers) as { type: string; timestamp: string; data: Record<string, unknown> };
}

export const PRIVATE_OK = { allowPrivate: true, allowHttp: true } as const;

/** A worker on `db` that may deliver to loopback receivers, with the clock given. */
export function testWorker(db: Database, options: Partial<WorkerOptions> = {}): WebhookWorker {
  return new WebhookWorker({ handle: { db }, policy: PRIVATE_OK, log: () => {}, ...options });
}

/** The events of changes (not the upcoming dates, which depend on today). */
export const CHANGE_EVENTS = ['contract.created', 'contract.updated', 'contract.deleted', 'contract.extraction_completed'] as const;

/** An endpoint of `userId` for the receiver (loopback allowed), subscribed to CHANGE_EVENTS unless told. */
export function receiverEndpoint(db: Database, userId: string, receiver: Receiver, input: Partial<CreateEndpointInput> = {}, now?: Date) {
  return createEndpoint(db, userId, { url: receiver.url, eventTypes: [...CHANGE_EVENTS], ...input }, { policy: PRIVATE_OK, now });
}

/** Removes every endpoint and event (each test starts without any). */
export async function clearWebhooks(db: Database): Promise<void> {
  await db.delete(webhookEndpoints);
  await db.delete(webhookEvents);
}

/** A clock the test moves. */
export function testClock(start = new Date()) {
  let now = start.getTime();
  const clock = () => new Date(now);
  clock.advance = (ms: number) => void (now += ms);
  clock.set = (date: Date) => void (now = date.getTime());
  return clock;
}

/** The configuration of webhook tests: an encryption key of their own (never a generated .data/ secret). */
export const WEBHOOK_TEST_ENV = { WEBHOOK_ENCRYPTION_KEY: 'test-webhook-encryption-key-0123456789abcdef' };
