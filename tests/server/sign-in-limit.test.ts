import bcrypt from 'bcrypt';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import type { DatabaseHandle } from '@/db/client';
import { DEMO_PASSWORD, DEMO_USERS, seedDemo } from '@/db/seed/demo';
import { PASSWORD_HASH_COST } from '@/lib/passwords';
import { signInWithPasswordLimited, signUpLimited } from '@/server/auth/sign-in-limit';
import { createUserWithPassword } from '@/server/auth/users';
import { verifyPassword } from '@/server/auth/passwords';
import { SHARED_CLIENT_BUCKET } from '@/server/http/client-address';
import { configureForFile } from '../helpers/config';
import { createTestDatabase } from '../helpers/db';
import { awayFromWindowEdge } from '../helpers/window-edge';

/**
 * The sign-in limit (issue 17): failed password sign-ins per client address and per
 * account, refused before any hash; the cost of every hash equal, so that an unknown
 * e-mail and a wrong password take the same time; hashing off the event loop.
 * The wiring into next-auth (every path, the 429, the log line) is in
 * password-sign-in.test.ts.
 */

configureForFile({
  RATE_LIMIT_STORE: 'memory',
  RATE_LIMIT_SIGN_IN_ADDRESS_PER_WINDOW: '5',
  RATE_LIMIT_SIGN_IN_ACCOUNT_PER_WINDOW: '8',
  RATE_LIMIT_SIGN_IN_ADDRESS_WINDOW_SECONDS: '3600',
  RATE_LIMIT_SIGN_IN_ACCOUNT_WINDOW_SECONDS: '14400',
});

let handle: DatabaseHandle;
beforeAll(async () => {
  handle = await createTestDatabase();
  await createUserWithPassword(handle.db, { email: 'victim@example.com', password: 'the right password' });
});
afterAll(async () => handle?.close());
afterEach(() => vi.restoreAllMocks());
// Each test counts attempts exactly within one window: hour-long (four hours, a multiple, for
// accounts), so that a boundary rarely falls within the file and a test seldom waits for one.
beforeEach(() => awayFromWindowEdge(3600, 10_000), 15_000);

const attempt = (address: string, email: string, password: string) => signInWithPasswordLimited(handle.db, { address, email, password });

describe('failed sign-ins per client address', () => {
  it('refuses the attempt after the limit before any password is hashed, with the seconds to wait', async () => {
    const compare = vi.spyOn(bcrypt, 'compare');
    for (let i = 0; i < 5; i++) {
      // Different accounts: only the address limit applies.
      expect(await attempt('198.51.100.1', `nobody${i}@example.com`, 'wrong password')).toEqual({ ok: false, reason: 'wrong_credentials' });
    }
    expect(compare).toHaveBeenCalledTimes(5);
    const refused = await attempt('198.51.100.1', 'victim@example.com', 'the right password');
    expect(refused).toMatchObject({ ok: false, reason: 'rate_limited' });
    expect(refused.ok === false && refused.reason === 'rate_limited' && refused.retryAfterSeconds).toBeGreaterThanOrEqual(1);
    expect(refused.ok === false && refused.reason === 'rate_limited' && refused.retryAfterSeconds).toBeLessThanOrEqual(3600);
    // Not even the right password was hashed.
    expect(compare).toHaveBeenCalledTimes(5);
    // Another address is not affected.
    expect(await attempt('198.51.100.2', 'victim@example.com', 'the right password')).toMatchObject({ ok: true });
  });

  it('counts every sign-up against the address', async () => {
    const created: string[] = [];
    const outcomes = [];
    for (let i = 0; i < 6; i++) {
      outcomes.push(await signUpLimited('198.51.100.3', async () => created.push(`user${i}`)));
    }
    expect(outcomes.slice(0, 5).every((o) => o.ok)).toBe(true);
    expect(outcomes[5]).toMatchObject({ ok: false, reason: 'rate_limited' });
    expect(created).toHaveLength(5);
  });
});

describe('failed sign-ins per account', () => {
  it('refuses an account guessed from many addresses, but not from an address it signed in from before', async () => {
    await createUserWithPassword(handle.db, { email: 'target@example.com', password: 'target password' });
    // The owner signs in from home once.
    expect(await attempt('203.0.113.50', 'target@example.com', 'target password')).toMatchObject({ ok: true });
    // Eight wrong guesses from eight addresses (each under its own address limit).
    for (let i = 0; i < 8; i++) {
      expect(await attempt(`192.0.2.${i + 1}`, 'TARGET@example.com', `guess ${i}`)).toEqual({ ok: false, reason: 'wrong_credentials' });
    }
    const compare = vi.spyOn(bcrypt, 'compare');
    // A ninth address, even with the right password: refused, nothing hashed.
    expect(await attempt('192.0.2.100', 'target@example.com', 'target password')).toMatchObject({ ok: false, reason: 'rate_limited' });
    expect(compare).not.toHaveBeenCalled();
    // The owner's own address still signs in: the limit is no lockout tool against them.
    expect(await attempt('203.0.113.50', 'target@example.com', 'target password')).toMatchObject({ ok: true });
  });

  it('exempts nobody in the shared bucket of unidentified clients', async () => {
    await createUserWithPassword(handle.db, { email: 'shared@example.com', password: 'shared password' });
    expect(await attempt(SHARED_CLIENT_BUCKET, 'shared@example.com', 'shared password')).toMatchObject({ ok: true });
    for (let i = 0; i < 8; i++) await attempt(`192.0.2.${50 + i}`, 'shared@example.com', `guess ${i}`);
    expect(await attempt(SHARED_CLIENT_BUCKET, 'shared@example.com', 'shared password')).toMatchObject({ ok: false, reason: 'rate_limited' });
  });
});

describe('the cost of a password check', () => {
  it('compares an unknown e-mail and a wrong password against hashes of the same cost', async () => {
    const compare = vi.spyOn(bcrypt, 'compare');
    await attempt('198.51.100.20', 'victim@example.com', 'wrong password');
    await attempt('198.51.100.20', 'no-such-user@example.com', 'wrong password');
    const rounds = compare.mock.calls.map(([, hash]) => bcrypt.getRounds(hash as string));
    expect(rounds).toEqual([PASSWORD_HASH_COST, PASSWORD_HASH_COST]);
  });

  it('seeds with the same cost, and upgrades an older hash at its next sign-in', async () => {
    await seedDemo(handle.db);
    const email = DEMO_USERS.alice.email;
    const [seeded] = await handle.query<{ password_hash: string }>('select password_hash from users where email = $1', [email]);
    expect(bcrypt.getRounds(seeded!.password_hash)).toBe(PASSWORD_HASH_COST);

    // A hash from before (the seeds used cost 10): verified, then made again at today's cost.
    await handle.query('update users set password_hash = $1 where email = $2', [await bcrypt.hash(DEMO_PASSWORD, 10), email]);
    expect(await attempt('198.51.100.21', email, DEMO_PASSWORD)).toMatchObject({ ok: true });
    const [upgraded] = await handle.query<{ password_hash: string }>('select password_hash from users where email = $1', [email]);
    expect(bcrypt.getRounds(upgraded!.password_hash)).toBe(PASSWORD_HASH_COST);
    expect(await attempt('198.51.100.21', email, DEMO_PASSWORD)).toMatchObject({ ok: true });
  });

  it('keeps the event loop serving while passwords are hashed', async () => {
    const hash = await bcrypt.hash('some password', PASSWORD_HASH_COST);
    // A timer every 5 ms; a gap well over that between two ticks is time the loop was held.
    let last = performance.now();
    let held = 0;
    const timer = setInterval(() => {
      const now = performance.now();
      if (now - last > 25) held += now - last - 5;
      last = now;
    }, 5);
    const started = performance.now();
    await Promise.all(Array.from({ length: 4 }, () => verifyPassword('wrong password', hash)));
    const elapsed = performance.now() - started;
    clearInterval(timer);
    // bcryptjs held the loop for nearly all of it; a busy shared machine still runs a
    // timer most of the time. A fraction, not one gap: the scheduler's hiccups are single.
    expect(held / elapsed).toBeLessThan(0.3);
  });
});
