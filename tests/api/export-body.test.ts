import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '@/db/client';
import { DEMO_USERS, seedDemo } from '@/db/seed/demo';
import { setProcessDatabase } from '@/server/database';
import { handleApiRequest } from '@/server/rest/router';
import { BASE, CLIENT_ADDRESS, PROXY_CLIENT_ADDRESS } from '../helpers/api';
import { configureForFile } from '../helpers/config';
import { captureLogs } from '../helpers/logs';
import { createTestDatabase } from '../helpers/db';
import { newApiKey } from '../helpers/tokens';

// The export's body is the client's business: a slow one is the client's 408 (not the
// server's 503 and an error line in its log), and a malformed one spends no export quota.
const DEADLINE_MS = 1000;
const EXPORTS = 3;
configureForFile({ ...PROXY_CLIENT_ADDRESS, REQUEST_DEADLINE_MS: String(DEADLINE_MS), RATE_LIMIT_EXPORT_PER_WINDOW: String(EXPORTS) });

let handle: DatabaseHandle;
beforeAll(async () => {
  handle = await createTestDatabase();
  setProcessDatabase(handle);
  await seedDemo(handle.db);
});
afterAll(async () => {
  await handle?.close();
});

const exportWith = (key: string, body?: BodyInit) =>
  handleApiRequest(
    new Request(`${BASE}/api/v1/contracts/export`, {
      method: 'POST',
      headers: { 'X-API-Key': key, 'X-Real-IP': CLIENT_ADDRESS, 'Content-Type': 'application/json' },
      body,
      // Node's fetch needs it for a streamed body.
      ...(body instanceof ReadableStream ? { duplex: 'half' } : {}),
    } as RequestInit),
  );

/** A body that sends its first bytes and then nothing more, as a slow or stalled client. */
function stalledBody(): ReadableStream<Uint8Array> {
  return new ReadableStream({
    start(controller) {
      controller.enqueue(new TextEncoder().encode('{"status":'));
    },
  });
}

/** The export quota left, from a well-formed export (which spends one). */
async function remainingAfterOneExport(key: string): Promise<number> {
  const res = await exportWith(key, '{"status":"completed"}');
  expect(res.status).toBe(200);
  await res.body?.cancel();
  return Number(res.headers.get('x-ratelimit-remaining'));
}

describe('the export body', () => {
  it('a body that stops arriving is a 408 after the deadline, with no error log and no quota spent', async () => {
    const { key } = await newApiKey(handle.db, DEMO_USERS.alice.id, { name: 'slow body' });
    const logs = captureLogs('error');
    try {
      const started = performance.now();
      const res = await exportWith(key, stalledBody());
      const waited = performance.now() - started;
      expect(res.status).toBe(408);
      const body = (await res.json()) as { error: { code: string; details: { param: string }[] } };
      expect(body.error.code).toBe('request_timeout');
      expect(body.error.details[0]!.param).toBe('body');
      // Still an authenticated answer: the quota's headers, nothing spent.
      expect(res.headers.get('x-ratelimit-remaining')).toBe(String(EXPORTS));
      expect(waited).toBeGreaterThanOrEqual(DEADLINE_MS - 20);
      expect(logs.lines).toEqual([]);
    } finally {
      logs.restore();
    }
    expect(await remainingAfterOneExport(key)).toBe(EXPORTS - 1);
  });

  it('a body that arrives slowly but within the limit is served', async () => {
    const { key } = await newApiKey(handle.db, DEMO_USERS.alice.id, { name: 'slow but in time' });
    const parts = ['{"status"', ':"completed"', '}'];
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        // Four waits of 15 % of the bound: 60 % in all, room for a loaded machine's timers
        // (a quarter each, 100 % in all, was a 408 on CI).
        await new Promise((resolve) => setTimeout(resolve, DEADLINE_MS * 0.15));
        const part = parts.shift();
        if (part === undefined) controller.close();
        else controller.enqueue(new TextEncoder().encode(part));
      },
    });
    const res = await exportWith(key, body);
    expect(res.status).toBe(200);
    await res.body?.cancel();
  });

  it.each([
    ['malformed JSON', '{"status":'],
    ['an unknown field', '{"colour":"red"}'],
    ['a wrong value', '{"status":"archived"}'],
  ])('%s is a 400 that spends no export quota', async (_what, bad) => {
    const { key } = await newApiKey(handle.db, DEMO_USERS.alice.id, { name: `bad body ${_what}` });
    for (let i = 0; i < EXPORTS + 2; i++) {
      const res = await exportWith(key, bad);
      expect(res.status).toBe(400);
      expect(res.headers.get('x-ratelimit-remaining')).toBe(String(EXPORTS));
    }
    expect(await remainingAfterOneExport(key)).toBe(EXPORTS - 1);
  });
});
