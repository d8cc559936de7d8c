import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '@/db/client';
import { users } from '@/db/schema';
import { DEMO_USERS, seedDemo } from '@/db/seed/demo';
import { endAllSessions, sessionIsCurrent, stampSessionVersion } from '@/server/auth/session-version';
import { createTestDatabase } from '../helpers/db';

/**
 * Sessions survive sign-out (issue 17): a session token carries its user's session
 * version and is good only while it is the current one. next-auth's jwt callback calls
 * these on every use (server/auth/next-auth.ts); the whole path through the production
 * build is e2e/security-web.spec.ts.
 */
let handle: DatabaseHandle;
beforeAll(async () => {
  handle = await createTestDatabase();
  await seedDemo(handle.db);
});
afterAll(async () => handle?.close());

describe('session versions', () => {
  it('a token issued now is current; after endAllSessions it and every earlier token are not, a new one is', async () => {
    const sub = DEMO_USERS.alice.id;
    const laptop: { sub: string; sv?: unknown } = { sub };
    const phone: { sub: string; sv?: unknown } = { sub };
    expect(await stampSessionVersion(handle.db, laptop)).toBe(true);
    expect(await stampSessionVersion(handle.db, phone)).toBe(true);
    expect(await sessionIsCurrent(handle.db, laptop)).toBe(true);

    await endAllSessions(handle.db, sub);
    expect(await sessionIsCurrent(handle.db, laptop)).toBe(false);
    expect(await sessionIsCurrent(handle.db, phone)).toBe(false);

    const again: { sub: string; sv?: unknown } = { sub };
    await stampSessionVersion(handle.db, again);
    expect(await sessionIsCurrent(handle.db, again)).toBe(true);
    // Other users' sessions are untouched.
    const bob = { sub: DEMO_USERS.bob.id, sv: undefined as unknown };
    await stampSessionVersion(handle.db, bob);
    await endAllSessions(handle.db, sub);
    expect(await sessionIsCurrent(handle.db, bob)).toBe(true);
  });

  it('a token without a version, with a forged one, or of no user, is not current', async () => {
    const sub = DEMO_USERS.carol.id;
    expect(await sessionIsCurrent(handle.db, { sub })).toBe(false);
    expect(await sessionIsCurrent(handle.db, { sub, sv: '0' })).toBe(false);
    expect(await sessionIsCurrent(handle.db, { sub: 'not-a-uuid', sv: 0 })).toBe(false);
    expect(await sessionIsCurrent(handle.db, { sub: undefined, sv: 0 })).toBe(false);
  });

  it("a deleted user's session is not current (the app then answers 401, not a foreign-key 500)", async () => {
    const [user] = await handle.db.insert(users).values({ email: 'leaving@example.com' }).returning({ id: users.id });
    const token: { sub: string; sv?: unknown } = { sub: user!.id };
    expect(await stampSessionVersion(handle.db, token)).toBe(true);
    await handle.db.delete(users).where(eq(users.id, user!.id));
    expect(await sessionIsCurrent(handle.db, token)).toBe(false);
    expect(await stampSessionVersion(handle.db, { sub: user!.id })).toBe(false);
  });
});
