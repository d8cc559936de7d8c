import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { DatabaseHandle } from '@/db/client';
import { accessTokens } from '@/db/schema';
import { DEMO_USERS, seedDemo } from '@/db/seed/demo';
import { clearVerifiedTokenCache, verifyToken } from '@/server/access/tokens';
import { createTestDatabase } from '../helpers/db';
import { newApiKey } from '../helpers/tokens';

/**
 * Inside a Next.js request, last_used_at is written through after(): once the response
 * has been sent, and kept alive until done on serverless. Outside one (this is the
 * fallback tests/access/tokens.test.ts covers) after() throws and the write runs
 * in the background. Here after() is Next's contract stood in for: it keeps the task and
 * runs it when the "response" is done.
 */
const scheduled = vi.hoisted(() => ({ tasks: [] as (() => unknown)[] }));
vi.mock('next/server', () => ({
  after: (task: () => unknown) => void scheduled.tasks.push(task),
}));

let handle: DatabaseHandle;
beforeAll(async () => {
  handle = await createTestDatabase();
  await seedDemo(handle.db);
});
afterAll(async () => handle?.close());

describe('last_used_at inside a request', () => {
  it('is written after the response, not during it, and at most once a minute per key', async () => {
    clearVerifiedTokenCache();
    const created = await newApiKey(handle.db, DEMO_USERS.carol.id, { name: 'after' });
    const lastUsed = async () => (await handle.db.select({ at: accessTokens.lastUsedAt }).from(accessTokens).where(eq(accessTokens.id, created.id)))[0]!.at;
    const t0 = new Date(Date.now() + 1000);

    expect(await verifyToken(handle.db, 'api_key', created.key, t0)).toBeDefined();
    expect(scheduled.tasks).toHaveLength(1);
    // The request is still being answered: nothing written yet.
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(await lastUsed()).toBeNull();

    // Thirty seconds later: no second write is scheduled.
    expect(await verifyToken(handle.db, 'api_key', created.key, new Date(t0.getTime() + 30_000))).toBeDefined();
    expect(scheduled.tasks).toHaveLength(1);

    // The response is done: Next.js runs the task.
    await scheduled.tasks.shift()!();
    expect(await lastUsed()).toEqual(t0);
  });
});
