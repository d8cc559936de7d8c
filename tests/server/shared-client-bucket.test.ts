import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setProcessDatabase, type DatabaseHandle } from '@/db/client';
import { DEMO_USERS, seedDemo } from '@/db/seed/demo';
import { createApiKey } from '@/server/api-keys/service';
import { createCalendarFeed } from '@/server/calendar/service';
import { handleCalendarFeedRequest } from '@/server/calendar/feed-handler';
import { resetProcessRateLimiter } from '@/server/rate-limit';
import { handleRestRequest } from '@/server/rest/openapi-handler';
import { createTestDatabase } from '../helpers/db';

// No proxy is trusted (the default of `next start`): every client shares one failure
// bucket. A small limit keeps this file's mark on a shared Redis small.
delete process.env.TRUSTED_PROXY_HOPS;
delete process.env.CLIENT_ADDRESS_HEADER;
delete process.env.VERCEL;
process.env.RATE_LIMIT_AUTH_FAILURES_PER_MINUTE = '3';
process.env.RATE_LIMIT_TIMEOUT_MS = '5000';

describe('without a trusted client address, bad keys are limited but nobody is locked out', () => {
  let handle: DatabaseHandle;
  let key: string;
  let feedUrl: string;
  beforeAll(async () => {
    handle = await createTestDatabase();
    setProcessDatabase(handle);
    await seedDemo(handle.db);
    key = (await createApiKey(handle.db, DEMO_USERS.bob.id, { name: 'shared bucket', expiresInDays: 7 })).key;
    feedUrl = (await createCalendarFeed(handle.db, DEMO_USERS.bob.id, { name: 'shared bucket' }, 'http://localhost')).url;
  });
  afterAll(async () => {
    await resetProcessRateLimiter();
    await handle?.close();
  });

  const list = (apiKey: string) => handleRestRequest(new Request('http://localhost/api/v1/contracts?limit=1', { headers: { 'X-API-Key': apiKey } }));

  it('bad keys get 429 once the shared bucket is used up; a correct key and a correct feed token are still served', async () => {
    const statuses: number[] = [];
    // Other test files may have counted a few failures in the shared bucket of a shared Redis.
    for (let i = 0; i < 6; i++) statuses.push((await list(`cdapi_wrong${i}`)).status);
    expect(statuses.at(-1), statuses.join(',')).toBe(429);
    expect(statuses.every((s) => s === 401 || s === 429)).toBe(true);

    expect((await list(key)).status).toBe(200);
    expect((await handleCalendarFeedRequest(new Request(feedUrl))).status).toBe(200);
    expect((await handleCalendarFeedRequest(new Request('http://localhost/api/v1/calendar/cdcal_wrong.ics'))).status).toBe(429);
  });
});
