import { createOpenApiFetchHandler } from 'trpc-to-openapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '@/db/client';
import { DEMO_ORGS, DEMO_USERS, demoContractRows, seedDemo } from '@/db/seed/demo';
import { errorEnvelope, toAppError } from '@/server/errors';
import { requestContext } from '@/server/http/context';
import { apiRoutes } from '@/server/rest/router';
import { restRouter } from '@/server/trpc/root';
import { PROXY_CLIENT_ADDRESS } from '../helpers/api';
import { configureForFile } from '../helpers/config';
import { createTestDatabase } from '../helpers/db';
import { newApiKey } from '../helpers/tokens';

/**
 * The JSON operations are served by the app's own small dispatcher over tRPC's caller
 * (server/rest/json-operations.ts, through the router's table), not by trpc-to-openapi's runtime. This holds the two
 * side by side on the same requests: same status, same body (errors mapped by the one
 * error module in both cases). If an upgrade of trpc-to-openapi changes how it reads
 * input (query arrays, path parameters, coercion), this fails and the dispatcher follows.
 */

configureForFile({ ...PROXY_CLIENT_ADDRESS, RATE_LIMIT_GENERAL_PER_WINDOW: '100000', RATE_LIMIT_AUTH_FAILURES_PER_MINUTE: '100000' });

let handle: DatabaseHandle;
let key: string;
beforeAll(async () => {
  handle = await createTestDatabase();
  await seedDemo(handle.db);
  key = (await newApiKey(handle.db, DEMO_USERS.bob.id)).key;
});
afterAll(async () => handle?.close());

const contractId = demoContractRows()[0]!.id!;
const CASES = [
  '/contracts',
  '/contracts?limit=2&offset=1',
  '/contracts?status=completed&status=pending',
  `/contracts?organization_id=${DEMO_ORGS.acme.id.toUpperCase()}`,
  '/contracts?organization_id=00000000-0000-4000-8000-000000000000',
  '/contracts?limit=abc',
  '/contracts?limit=',
  '/contracts?auto_renewal=false&sort=-contract_value',
  '/contracts?expiring_within_days=90&sort=expiration_date',
  '/contracts?q=%25&unknown=1',
  '/contracts/',
  `/contracts/${contractId}`,
  `/contracts/${contractId.toUpperCase()}`,
  '/contracts/not-a-uuid',
  '/contracts/00000000-0000-4000-8000-000000000000',
  `/contracts/${encodeURIComponent(' ')}`,
];

/** One answer as a comparable value: the status and the body without its request id. */
async function comparable(res: Response) {
  const body = (await res.json()) as Record<string, unknown>;
  delete body.request_id;
  return { status: res.status, body };
}

function request(path: string, withKey = true) {
  return new Request(`http://localhost/api/v1${path}`, { headers: { ...(withKey ? { 'X-API-Key': key } : {}), 'X-Real-IP': '2001:db8:ada::1' } });
}

async function ours(req: Request) {
  const headers = new Headers();
  const ctx = requestContext(req, { db: handle.db, readDb: handle.db }, 'req_test', headers);
  try {
    // The JSON operation's handler from the router's table, without the router around it.
    const path = new URL(req.url).pathname.replace(/^\/api\/v1/, '');
    const route = apiRoutes().find((r) => r.pattern.test(path))!;
    return await route.serve(req, headers, async () => ctx);
  } catch (error) {
    const appError = toAppError(error, ctx.requestId, false);
    return Response.json(errorEnvelope(appError, ctx.requestId), { status: appError.status });
  }
}

async function library(req: Request) {
  const ctx = requestContext(req, { db: handle.db, readDb: handle.db }, 'req_test', new Headers());
  let failure: unknown;
  const res = await createOpenApiFetchHandler({
    endpoint: '/api/v1',
    router: restRouter,
    req,
    createContext: () => ctx,
    onError: ({ error }: { error: unknown }) => void (failure = error),
  });
  if (res.ok) return res;
  const appError = toAppError(failure, ctx.requestId, false);
  return Response.json(errorEnvelope(appError, ctx.requestId), { status: appError.status });
}

describe("the JSON operations' dispatcher answers as trpc-to-openapi's own adapter", () => {
  it.each(CASES)('GET %s', async (path) => {
    expect(await comparable(await ours(request(path)))).toEqual(await comparable(await library(request(path))));
  });

  describe('with a cursor (taken from a first page)', () => {
    const cursors: Record<string, string> = {};
    beforeAll(async () => {
      for (const first of ['/contracts?limit=2', '/contracts?limit=2&sort=-contract_value']) {
        const page = (await (await ours(request(first))).json()) as { data: { pagination: { next_cursor: string | null } } };
        expect(page.data.pagination.next_cursor, first).toEqual(expect.any(String));
        cursors[first] = encodeURIComponent(page.data.pagination.next_cursor!);
      }
    });

    // The 400 of cursor with a non-zero offset is decided by the input schema
    // (listContractsInput's refinement), which both adapters run: the same answer is required.
    it.each([
      ['the next page', 200, (c: Record<string, string>) => `/contracts?limit=2&cursor=${c['/contracts?limit=2']}`],
      ['the next page of a sorted list', 200, (c: Record<string, string>) => `/contracts?limit=2&sort=-contract_value&cursor=${c['/contracts?limit=2&sort=-contract_value']}`],
      ['cursor with offset=0', 200, (c: Record<string, string>) => `/contracts?limit=2&offset=0&cursor=${c['/contracts?limit=2']}`],
      ['cursor with a non-zero offset', 400, (c: Record<string, string>) => `/contracts?limit=2&offset=1&cursor=${c['/contracts?limit=2']}`],
      ['a cursor that was never issued', 400, () => '/contracts?limit=2&cursor=bm90LWEtY3Vyc29y'],
    ] as const)('GET %s: %i', async (_case, status, pathOf) => {
      const path = pathOf(cursors);
      const answer = await comparable(await ours(request(path)));
      expect(answer).toEqual(await comparable(await library(request(path))));
      expect(answer.status).toBe(status);
    });
  });

  it('without a key', async () => {
    expect(await comparable(await ours(request('/contracts', false)))).toEqual(await comparable(await library(request('/contracts', false))));
  });
});
