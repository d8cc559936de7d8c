import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '@/db/client';
import { revokeTokenRow } from '@/db/queries/tokens';
import { DEMO_USERS, seedDemo } from '@/db/seed/demo';
import { announceRevocation } from '@/server/access/revocations';
import { clearVerifiedTokenCache } from '@/server/access/tokens';
import { setProcessDatabase } from '@/server/database';
import { apiRequest, PROXY_CLIENT_ADDRESS, send } from '../helpers/api';
import { applyConfig, restoreConfig } from '../helpers/config';
import { createTestDatabase } from '../helpers/db';
import { newApiKey, revokeApiKey } from '../helpers/tokens';
import { startUpstashProxy, type UpstashProxy } from '../helpers/upstash-proxy';
import { redisReachable, TEST_REDIS_URL } from '../rate-limit/support';

/**
 * A revocation made on another instance is refused here at once, although this process
 * still holds the key in its 30-second cache: the other instance announces it in the
 * rate-limit store (server/access/revocations.ts), and this one reads the announcement
 * together with its rate-limit call, without a database query and without an extra round
 * trip to the store.
 *
 * "Another instance" is played by what it does: it updates the row and announces the
 * revocation; this process's cache is left as it was.
 */

const reachable = await redisReachable();

let handle: DatabaseHandle;
beforeAll(async () => {
  handle = await createTestDatabase();
  setProcessDatabase(handle);
  await seedDemo(handle.db);
});
afterAll(async () => {
  await restoreConfig();
  await handle?.close();
});

/** Revokes a key as another instance would: the row and the announcement, not this process's cache. */
async function revokeElsewhere(userId: string, keyId: string) {
  void userId;
  await revokeTokenRow(handle.db, 'api_key', keyId, new Date());
  await announceRevocation(handle.db, keyId);
}

const list = (key: string) => send(apiRequest('GET', '/contracts?limit=1', { key }));

describe.skipIf(!reachable)('a revocation made on another instance (Redis)', () => {
  beforeAll(() => applyConfig({ ...PROXY_CLIENT_ADDRESS, REDIS_URL: TEST_REDIS_URL, UPSTASH_REDIS_REST_URL: undefined, UPSTASH_REDIS_REST_TOKEN: undefined }));

  it('is refused on the next request, although the key is still in this process cache', async () => {
    clearVerifiedTokenCache();
    const { key, id } = await newApiKey(handle.db, DEMO_USERS.alice.id, { name: 'revoked elsewhere' });
    expect((await list(key)).status).toBe(200); // now cached here
    await revokeElsewhere(DEMO_USERS.alice.id, id);
    const refused = await list(key);
    expect(refused.status).toBe(401);
    expect(refused.json).toMatchObject({ error: { code: 'unauthorized' } });
    expect((await list(key)).status).toBe(401);
  });

  it('a revocation through the service announces itself too (the path of the settings page and the CLI)', async () => {
    clearVerifiedTokenCache();
    const { key, id } = await newApiKey(handle.db, DEMO_USERS.bob.id, { name: 'revoked by the service' });
    expect((await list(key)).status).toBe(200);
    await revokeApiKey(handle.db, DEMO_USERS.bob.id, id);
    expect((await list(key)).status).toBe(401);
  });
});

describe.skipIf(!reachable)('a revocation made on another instance (Upstash REST)', () => {
  let proxy: UpstashProxy;
  beforeAll(async () => {
    proxy = await startUpstashProxy({ redisUrl: TEST_REDIS_URL });
    await applyConfig({ ...PROXY_CLIENT_ADDRESS, UPSTASH_REDIS_REST_URL: proxy.url, UPSTASH_REDIS_REST_TOKEN: proxy.token, REDIS_URL: undefined });
  });
  afterAll(() => proxy?.close());

  const httpRequests = () => Object.values(proxy.requests).reduce((sum, n) => sum + n, 0);

  it('is refused on the next request, and a cached key still costs one HTTP request to the store', async () => {
    clearVerifiedTokenCache();
    const { key, id } = await newApiKey(handle.db, DEMO_USERS.carol.id, { name: 'upstash' });
    expect((await list(key)).status).toBe(200);
    expect((await list(key)).status).toBe(200); // the rate-limit script is cached in Redis now
    const before = httpRequests();
    expect((await list(key)).status).toBe(200);
    // The blocked-address check, then the rate-limit call with the revocation marker: two
    // requests, as before revocations were announced (the marker rides along).
    expect(httpRequests() - before).toBe(2);

    await revokeElsewhere(DEMO_USERS.carol.id, id);
    expect((await list(key)).status).toBe(401);
  });
});
