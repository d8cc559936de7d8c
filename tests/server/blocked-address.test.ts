import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '@/db/client';
import { DEMO_USERS, seedDemo } from '@/db/seed/demo';
import { TOKEN_FORMATS } from '@/server/access/token-format';
import { clearVerifiedTokenCache } from '@/server/access/tokens';
import { setProcessDatabase } from '@/server/database';
import { handleApiRequest } from '@/server/rest/router';
import { PROXY_CLIENT_ADDRESS } from '../helpers/api';
import { applyConfig, restoreConfig } from '../helpers/config';
import { countDatabaseCalls } from '../helpers/database-calls';
import { createTestDatabase } from '../helpers/db';
import { newApiKey, newFeedToken } from '../helpers/tokens';

// A client address out of failed attempts costs no database work where addresses are
// known (behind a trusted proxy): it gets 429 whatever it sends, so nothing is looked up.
// In the shared bucket (no proxy) a correct key must still be served, so every key is.
const LIMIT = 3;
const freshAddress = () => `2001:db8:${randomBytes(2).toString('hex')}:${randomBytes(2).toString('hex')}::7`;
// Well formed, with a valid checksum, and unknown: only the database can refuse these.
const wellFormedUnknownKey = () => TOKEN_FORMATS.api_key.generate();

let handle: DatabaseHandle;
let calls: ReturnType<typeof countDatabaseCalls>;
beforeAll(async () => {
  handle = await createTestDatabase();
  setProcessDatabase(handle);
  await seedDemo(handle.db);
  calls = countDatabaseCalls(handle.db);
});
afterAll(async () => {
  calls?.restore();
  await handle?.close();
});

const list = (key: string, address?: string) =>
  handleApiRequest(
    new Request('http://localhost/api/v1/contracts?limit=1', { headers: { 'X-API-Key': key, ...(address ? { 'X-Real-IP': address } : {}) } }),
  );
const feed = (token: string, address: string) => handleApiRequest(new Request(`http://localhost/api/v1/calendar/${token}.ics`, { headers: { 'X-Real-IP': address } }));

describe('behind a trusted proxy', () => {
  beforeAll(() => applyConfig({ ...PROXY_CLIENT_ADDRESS, RATE_LIMIT_AUTH_FAILURES_PER_MINUTE: String(LIMIT), RATE_LIMIT_TIMEOUT_MS: '5000' }));
  afterAll(() => restoreConfig());

  it('an address out of attempts gets 429 for bad keys, a correct key and a feed token, with no database call', async () => {
    const key = (await newApiKey(handle.db, DEMO_USERS.bob.id, { name: 'blocked address' })).key;
    const feedToken = (await newFeedToken(handle.db, DEMO_USERS.bob.id, 'blocked address')).token;
    clearVerifiedTokenCache();
    const address = freshAddress();

    calls.reset();
    for (let i = 0; i < LIMIT; i++) expect((await list(wellFormedUnknownKey(), address)).status).toBe(401);
    // Until the address is out of attempts, each unknown key is one lookup.
    expect(calls.count).toBe(LIMIT);

    calls.reset();
    const statuses = [];
    for (let i = 0; i < 20; i++) statuses.push((await list(wellFormedUnknownKey(), address)).status);
    statuses.push((await list(key, address)).status);
    statuses.push((await feed(feedToken, address)).status);
    expect(statuses).toEqual(Array(22).fill(429));
    expect(calls.count).toBe(0);

    // The counter sees the database: the same key from another address is looked up and served.
    expect((await list(key, freshAddress())).status).toBe(200);
    expect(calls.count).toBeGreaterThan(0);
  });
});

describe('without a trusted proxy (one shared bucket)', () => {
  beforeAll(() =>
    applyConfig({ TRUSTED_PROXY_HOPS: undefined, CLIENT_ADDRESS_HEADER: undefined, VERCEL: undefined, RATE_LIMIT_AUTH_FAILURES_PER_MINUTE: String(LIMIT), RATE_LIMIT_TIMEOUT_MS: '5000' }),
  );
  afterAll(() => restoreConfig());

  it('every well-formed key is still looked up once the bucket is used up, so that a correct key is served', async () => {
    const key = (await newApiKey(handle.db, DEMO_USERS.bob.id, { name: 'shared bucket lookups' })).key;
    clearVerifiedTokenCache();
    // Other test files may have counted failures in the shared bucket of a shared Redis.
    for (let i = 0; i <= LIMIT; i++) await list(wellFormedUnknownKey());
    calls.reset();
    const statuses = [];
    for (let i = 0; i < 10; i++) statuses.push((await list(wellFormedUnknownKey())).status);
    expect(statuses.at(-1)).toBe(429);
    // This is the rule of docs/configuration.md ("Client address"): the shared bucket limits refusals, not lookups.
    expect(calls.count).toBe(10);
    expect((await list(key)).status).toBe(200);
  });
});
