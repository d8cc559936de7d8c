import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createContractDataClient } from '@/clients/typescript/src/index';
import type { DatabaseHandle } from '@/db/client';
import { DEMO_USERS, demoContractId, seedDemo } from '@/db/seed/demo';
import { setProcessDatabase } from '@/server/database';
import { handleApiRequest } from '@/server/rest/router';
import { PROXY_CLIENT_ADDRESS } from '../helpers/api';
import { configureForFile } from '../helpers/config';
import { createTestDatabase } from '../helpers/db';
import { newApiKey } from '../helpers/tokens';

/**
 * The typed client's `revalidate` and `auth: 'bearer'` options against the API's own
 * router over real HTTP: a second GET goes out with If-None-Match, comes back 304 (not
 * counted against the key), and the caller gets the remembered answer.
 */

configureForFile(PROXY_CLIENT_ADDRESS);

let handle: DatabaseHandle;
let key: string;
let server: http.Server;
let baseUrl = '';
const seen: { ifNoneMatch?: string; authorization?: string; xApiKey?: string; status: number }[] = [];

beforeAll(async () => {
  handle = await createTestDatabase();
  setProcessDatabase(handle);
  await seedDemo(handle.db);
  key = (await newApiKey(handle.db, DEMO_USERS.alice.id)).key;
  server = http.createServer(async (req, res) => {
    const headers = new Headers();
    for (const [name, value] of Object.entries(req.headers)) if (typeof value === 'string') headers.set(name, value);
    headers.set('X-Real-IP', '2001:db8:c11e:1::1');
    const answer = await handleApiRequest(new Request(`http://${req.headers.host}${req.url}`, { method: req.method, headers }));
    seen.push({ ifNoneMatch: req.headers['if-none-match'], authorization: req.headers.authorization, xApiKey: req.headers['x-api-key'] as string | undefined, status: answer.status });
    res.writeHead(answer.status, Object.fromEntries(answer.headers.entries()));
    res.end(Buffer.from(await answer.arrayBuffer()));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1`;
});
afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await handle?.close();
});

describe('the typed client', () => {
  it('revalidates GETs with the remembered ETag and hands a 304 back as the remembered answer, sending the key as Bearer', async () => {
    const client = createContractDataClient({ baseUrl, apiKey: key, auth: 'bearer', revalidate: true });
    const path = { params: { path: { id: demoContractId('alice-1') } } };
    seen.length = 0;
    const first = await client.GET('/contracts/{id}', path);
    const second = await client.GET('/contracts/{id}', path);
    expect(first.response.status).toBe(200);
    expect(second.response.status).toBe(200);
    expect(second.data).toEqual(first.data);
    expect(seen.map((s) => s.status)).toEqual([200, 304]);
    expect(seen[1]!.ifNoneMatch).toBe(first.response.headers.get('etag'));
    expect(seen.every((s) => s.authorization === `Bearer ${key}` && s.xApiKey === undefined)).toBe(true);
    // The 304 was not counted: the key stands where the first answer left it, and the
    // caller sees the 304's own request id.
    expect(second.response.headers.get('x-ratelimit-remaining')).toBe(first.response.headers.get('x-ratelimit-remaining'));
    expect(second.response.headers.get('x-request-id')).not.toBe(first.response.headers.get('x-request-id'));

    // Another query is another answer; without the option nothing is remembered.
    await client.GET('/contracts', { params: { query: { limit: 2 } } });
    expect(seen.at(-1)).toMatchObject({ status: 200, ifNoneMatch: undefined });
    const plain = createContractDataClient({ baseUrl, apiKey: key });
    await plain.GET('/contracts/{id}', path);
    expect(seen.at(-1)).toMatchObject({ status: 200, ifNoneMatch: undefined, xApiKey: key });
  });
});
