import type { DatabaseHandle } from '@/db/client';
import { contracts, memberships } from '@/db/schema';
import { DEMO_USERS, seedDemo } from '@/db/seed/demo';
import { TOKEN_FORMATS } from '@/server/access/token-format';
import { setProcessDatabase } from '@/server/database';
import { createTestDatabase } from '../../helpers/db';
import { newApiKey, newFeedToken, revokeApiKey, revokeFeedToken } from '../../helpers/tokens';

export type DemoUser = keyof typeof DEMO_USERS;

export interface ModelContract {
  id: string;
  ownerId: string;
  organizationId: string | null;
  status: string;
  createdAt: Date;
  updatedAt: Date;
  title: string;
  expirationDate: string | null;
  renewalDate: string | null;
  autoRenewal: boolean | null;
  renewalTerm: string | null;
  noticePeriod: string | null;
  contractValue: number | null;
  provider: string | null;
  client: string | null;
}

/**
 * The demo data on a private database, as the app's process database, with a key per
 * demo user and one of every kind of bad key, plus a model of who may see what, read
 * back from the database (so the tests compare the API with the data, not with
 * themselves).
 */
export interface DemoWorld {
  handle: DatabaseHandle;
  keys: Record<DemoUser, string>;
  badKeys: Record<'revoked' | 'expired' | 'unknown' | 'badChecksum' | 'garbage' | 'truncated', string>;
  /** An active calendar feed token per demo user, and a revoked one. */
  feedTokens: Record<DemoUser, string>;
  revokedFeedToken: string;
  contracts: ModelContract[];
  userIdOf(user: DemoUser): string;
  organizationsOf(userId: string): string[];
  canSee(userId: string, contract: ModelContract): boolean;
  /** The contracts a user sees with these filters, in list order. */
  visible(userId: string, filters?: { status?: string; organizationId?: string }): ModelContract[];
}

export async function createDemoWorld(): Promise<DemoWorld> {
  const handle = await createTestDatabase();
  setProcessDatabase(handle);
  await seedDemo(handle.db);
  const keys = {} as Record<DemoUser, string>;
  for (const user of Object.keys(DEMO_USERS) as DemoUser[]) {
    keys[user] = (await newApiKey(handle.db, DEMO_USERS[user].id, { name: `world ${user}` })).key;
  }
  const revoked = await newApiKey(handle.db, DEMO_USERS.alice.id, { name: 'revoked' });
  await revokeApiKey(handle.db, DEMO_USERS.alice.id, revoked.id);
  const expired = await newApiKey(handle.db, DEMO_USERS.bob.id, { name: 'expired', now: new Date(Date.now() - 8 * 86_400_000) });
  const valid = keys.carol;
  const badKeys = {
    revoked: revoked.key,
    expired: expired.key,
    unknown: TOKEN_FORMATS.api_key.generate(),
    badChecksum: `${valid.slice(0, -1)}${valid.endsWith('A') ? 'B' : 'A'}`,
    garbage: 'not-a-key',
    truncated: valid.slice(0, -6),
  };

  const feedTokens = {} as Record<DemoUser, string>;
  for (const user of Object.keys(DEMO_USERS) as DemoUser[]) {
    feedTokens[user] = (await newFeedToken(handle.db, DEMO_USERS[user].id, 'world')).token;
  }
  const revokedFeed = await newFeedToken(handle.db, DEMO_USERS.bob.id, 'revoked');
  await revokeFeedToken(handle.db, DEMO_USERS.bob.id, revokedFeed.id);

  const rows = await handle.db
    .select({
      id: contracts.id,
      ownerId: contracts.ownerId,
      organizationId: contracts.organizationId,
      status: contracts.status,
      createdAt: contracts.createdAt,
      updatedAt: contracts.updatedAt,
      title: contracts.title,
      expirationDate: contracts.expirationDate,
      renewalDate: contracts.renewalDate,
      autoRenewal: contracts.autoRenewal,
      renewalTerm: contracts.renewalTerm,
      noticePeriod: contracts.noticePeriod,
      contractValue: contracts.contractValue,
      provider: contracts.provider,
      client: contracts.client,
    })
    .from(contracts);
  const members = await handle.db.select().from(memberships);
  const organizationsOf = (userId: string) => members.filter((m) => m.userId === userId).map((m) => m.organizationId);
  const canSee = (userId: string, c: ModelContract) =>
    c.organizationId === null ? c.ownerId === userId : organizationsOf(userId).includes(c.organizationId);

  return {
    handle,
    keys,
    badKeys,
    feedTokens,
    revokedFeedToken: revokedFeed.token,
    contracts: rows,
    userIdOf: (user) => DEMO_USERS[user].id,
    organizationsOf,
    canSee,
    visible: (userId, filters = {}) =>
      rows
        .filter((c) => canSee(userId, c))
        .filter((c) => filters.status === undefined || c.status === filters.status)
        .filter((c) => filters.organizationId === undefined || c.organizationId === filters.organizationId)
        .sort(listOrder),
  };
}

/** The API's list order: created_at descending, then id descending. */
export function listOrder(a: { createdAt: Date; id: string }, b: { createdAt: Date; id: string }): number {
  return b.createdAt.getTime() - a.createdAt.getTime() || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0);
}
