import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '@/db/client';
import { countActiveTokens } from '@/db/queries/tokens';
import { accessTokens, tokenKind, users } from '@/db/schema';
import type { TokenKind, TokenStatus } from '@/lib/tokens';
import { listTokens, statusOf } from '@/server/access/tokens';
import { createTestDatabase, describeDriver } from '../helpers/db';

/**
 * "Is a token active" is written twice: in TypeScript (`statusOf`, server/access/tokens.ts:
 * verification and the settings pages) and in SQL (`countActiveTokens`, db/queries/tokens.ts:
 * the limit of active tokens). Both are held here to one answer for tokens in every state,
 * around the instant of expiry to the millisecond.
 */

let handle: DatabaseHandle;
let userId: string;
const NOW = new Date('2031-03-04T10:00:00.000Z');
const ms = (delta: number) => new Date(NOW.getTime() + delta);
const DAY = 86_400_000;
// The kinds users create in Settings (the e-mailed link kinds have no list or limit).
const TOKEN_KINDS = tokenKind.enumValues.filter((kind): kind is TokenKind => kind === 'api_key' || kind === 'calendar_feed');

/** One token of each state at NOW, and the status statusOf gives it then. */
const STATES: { name: string; expiresAt: Date | null; revokedAt: Date | null; status: TokenStatus }[] = [
  { name: 'no expiry', expiresAt: null, revokedAt: null, status: 'active' },
  { name: 'expires in 30 days', expiresAt: ms(30 * DAY), revokedAt: null, status: 'active' },
  { name: 'expires in a ms', expiresAt: ms(1), revokedAt: null, status: 'active' },
  { name: 'expires now', expiresAt: NOW, revokedAt: null, status: 'expired' },
  { name: 'expired a ms ago', expiresAt: ms(-1), revokedAt: null, status: 'expired' },
  { name: 'expired a day ago', expiresAt: ms(-DAY), revokedAt: null, status: 'expired' },
  { name: 'revoked', expiresAt: null, revokedAt: ms(-DAY), status: 'revoked' },
  { name: 'revoked, would expire later', expiresAt: ms(30 * DAY), revokedAt: ms(-1), status: 'revoked' },
  { name: 'revoked and expired', expiresAt: ms(-1), revokedAt: ms(-DAY), status: 'revoked' },
];

beforeAll(async () => {
  handle = await createTestDatabase();
  const [user] = await handle.db.insert(users).values({ email: `token-status-${crypto.randomUUID()}@example.com` }).returning({ id: users.id });
  userId = user!.id;
  for (const kind of TOKEN_KINDS) {
    await handle.db.insert(accessTokens).values(
      STATES.map((state) => ({ userId, kind, name: state.name, tokenHash: randomBytes(32).toString('hex'), hint: 'x…abcd', expiresAt: state.expiresAt, revokedAt: state.revokedAt })),
    );
  }
});
afterAll(() => handle?.close());

describe(`statusOf and countActiveTokens agree (${describeDriver()})`, () => {
  it.each(TOKEN_KINDS)('%s: each state as expected at the instant', async (kind) => {
    const statuses = Object.fromEntries((await listTokens(handle.db, kind, userId, NOW)).map((t) => [t.name, t.status]));
    expect(statuses).toEqual(Object.fromEntries(STATES.map((s) => [s.name, s.status])));
    expect(await countActiveTokens(handle.db, kind, userId, NOW)).toBe(3);
  });

  it.each(TOKEN_KINDS)('%s: the SQL count is the number statusOf calls active, a ms and a day either side', async (kind) => {
    for (const now of [ms(-DAY), ms(-2), ms(-1), NOW, ms(1), ms(2), ms(DAY), ms(31 * DAY)]) {
      const rows = await listTokens(handle.db, kind, userId, now);
      expect(rows).toHaveLength(STATES.length);
      const active = rows.filter((row) => statusOf(row, now) === 'active').length;
      expect(await countActiveTokens(handle.db, kind, userId, now), now.toISOString()).toBe(active);
    }
  });
});
