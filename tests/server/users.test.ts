import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '@/db/client';
import { authenticateWithPassword, createUserWithPassword, EmailTakenError } from '@/server/auth/users';
import { createTestDatabase } from '../helpers/db';

let handle: DatabaseHandle;
beforeAll(async () => {
  handle = await createTestDatabase();
});
afterAll(async () => handle?.close());

describe('password accounts', () => {
  it('signs up with a normalised email and a bcrypt hash, and signs in with either case', async () => {
    const user = await createUserWithPassword(handle.db, { email: '  Dana@Example.COM ', password: 'correct horse battery' });
    expect(user.email).toBe('dana@example.com');
    const [row] = await handle.query<{ password_hash: string }>('select password_hash from users where id = $1', [user.id]);
    expect(row!.password_hash).toMatch(/^\$2[aby]\$11\$/);
    expect(row!.password_hash).not.toContain('correct horse');
    expect(await authenticateWithPassword(handle.db, 'DANA@example.com', 'correct horse battery')).toMatchObject({ id: user.id });
  });

  it('answers a wrong password and an unknown email the same way', async () => {
    expect(await authenticateWithPassword(handle.db, 'dana@example.com', 'wrong password!')).toBeUndefined();
    expect(await authenticateWithPassword(handle.db, 'nobody@example.com', 'correct horse battery')).toBeUndefined();
  });

  it('refuses passwords over 72 bytes instead of silently cutting them', async () => {
    const long = 'a'.repeat(72);
    await createUserWithPassword(handle.db, { email: 'long@example.com', password: long });
    expect(await authenticateWithPassword(handle.db, 'long@example.com', long)).toBeDefined();
    // bcrypt alone would accept this one: it ignores everything after byte 72.
    expect(await authenticateWithPassword(handle.db, 'long@example.com', `${long}extra`)).toBeUndefined();
    await expect(createUserWithPassword(handle.db, { email: 'longer@example.com', password: `${long}é` })).rejects.toThrow(/72 bytes/);
  });

  it('refuses a second account with the same email', async () => {
    await expect(createUserWithPassword(handle.db, { email: 'dana@example.com', password: 'another password' })).rejects.toBeInstanceOf(EmailTakenError);
  });
});
