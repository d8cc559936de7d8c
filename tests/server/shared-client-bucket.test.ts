import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '@/db/client';
import { setProcessDatabase } from '@/server/database';
import { DEMO_USERS, seedDemo } from '@/db/seed/demo';
import { handleApiRequest } from '@/server/rest/router';
import { configureForFile } from '../helpers/config';
import { createTestDatabase } from '../helpers/db';
import { newApiKey, newFeedToken } from '../helpers/tokens';

// No proxy is trusted (the default of `next start`): every client shares one failure
// bucket. A small limit keeps this file's mark on a shared Redis small.
configureForFile({
  TRUSTED_PROXY_HOPS: undefined,
  CLIENT_ADDRESS_HEADER: undefined,
  VERCEL: undefined,
  RATE_LIMIT_AUTH_FAILURES_PER_MINUTE: '3',
  RATE_LIMIT_TIMEOUT_MS: '5000',
});

describe('without a trusted client address, bad keys are limited but nobody is locked out', () => {
  let handle: DatabaseHandle;
  let key: string;
  let feedUrl: string;
  beforeAll(async () => {
    handle = await createTestDatabase();
    setProcessDatabase(handle);
    await seedDemo(handle.db);
    key = (await newApiKey(handle.db, DEMO_USERS.bob.id, { name: 'shared bucket' })).key;
    feedUrl = `http://localhost/api/v1/calendar/${(await newFeedToken(handle.db, DEMO_USERS.bob.id, 'shared bucket')).token}.ics`;
  });
  afterAll(async () => {
    await handle?.close();
  });

  const list = (apiKey: string) => handleApiRequest(new Request('http://localhost/api/v1/contracts?limit=1', { headers: { 'X-API-Key': apiKey } }));

  it('bad keys get 429 once the shared bucket is used up; a correct key and a correct feed token are still served', async () => {
    const statuses: number[] = [];
    // Other test files may have counted a few failures in the shared bucket of a shared Redis.
    for (let i = 0; i < 6; i++) statuses.push((await list(`cdapi_wrong${i}`)).status);
    expect(statuses.at(-1), statuses.join(',')).toBe(429);
    expect(statuses.every((s) => s === 401 || s === 429)).toBe(true);

    expect((await list(key)).status).toBe(200);
    expect((await handleApiRequest(new Request(feedUrl))).status).toBe(200);
    expect((await handleApiRequest(new Request('http://localhost/api/v1/calendar/cdcal_wrong.ics'))).status).toBe(429);
  });
});
