import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_PASSWORD, DEMO_USERS } from '@/db/seed/demo';
import { cluster, instanceNames, mintKey, request, revokeKey, signIn, type Answer, type Cluster } from './support';

/**
 * A key's usage and request log on three instances (issue 25): every instance counts its
 * own requests and the counts meet in one place (Redis here), so 100 concurrent requests
 * spread by the balancer are counted exactly, once, whichever instance is asked; and the
 * request id of an error body is found within two seconds, from any instance.
 */

let c: Cluster;
let cookie: string;
const cleanup: (() => Promise<unknown>)[] = [];
beforeAll(async () => {
  c = cluster();
  cookie = await signIn(c, DEMO_USERS.carol.email, DEMO_PASSWORD);
});
afterAll(async () => {
  for (const undo of cleanup) await undo().catch(() => {});
});

interface Bucket {
  read: Record<'2xx' | '304' | '4xx' | '429' | '5xx', number>;
  export: Record<'2xx' | '304' | '4xx' | '429' | '5xx', number>;
}

/** A query of the app's tRPC endpoint with carol's session, on whichever instance the balancer picks. */
async function trpcQuery<T>(procedure: string, input: unknown): Promise<{ status: number; data: T | undefined; servedBy: string | undefined }> {
  const answer = await request(c, `/api/trpc/${procedure}?input=${encodeURIComponent(JSON.stringify(input))}`, { headers: { cookie } });
  return { status: answer.status, data: answer.status === 200 ? (JSON.parse(answer.body) as { result: { data: T } }).result.data : undefined, servedBy: answer.servedBy };
}

const tally = (answers: Answer[]) => ({
  '2xx': answers.filter((a) => a.status >= 200 && a.status < 300).length,
  '4xx': answers.filter((a) => a.status >= 400 && a.status < 500 && a.status !== 429).length,
  '429': answers.filter((a) => a.status === 429).length,
  '5xx': answers.filter((a) => a.status >= 500).length,
});

describe('usage and the request log across three instances', () => {
  it('counts 100 concurrent requests exactly, once, on every instance it is read from', async () => {
    const { key, id } = await mintKey(c, DEMO_USERS.carol.email, `cluster usage ${Date.now()}`);
    cleanup.push(() => revokeKey(c, id));
    const unknown = '00000000-0000-4000-8000-000000000000';
    const answers = await Promise.all(
      Array.from({ length: 100 }, (_, i) => request(c, i % 4 === 3 ? `/api/v1/contracts/${unknown}` : '/api/v1/contracts?limit=1', { headers: { 'x-api-key': key } })),
    );
    // The balancer spread them over the three instances.
    expect(new Set(answers.map((a) => a.servedBy))).toEqual(new Set(instanceNames(c)));
    const sent = tally(answers);
    expect(sent['2xx'] + sent['4xx'] + sent['429']).toBe(100);
    expect(sent['4xx']).toBeGreaterThan(0);

    // Each instance writes its counts within a second; poll a little longer than that.
    const totalsOf = async () => (await trpcQuery<{ totals: Bucket }>('keyActivity.usage', { keyId: id })).data?.totals.read;
    await expect.poll(async () => JSON.stringify(await totalsOf()), { timeout: 5_000, interval: 250 }).toBe(JSON.stringify({ '2xx': sent['2xx'], '304': 0, '4xx': sent['4xx'], '429': sent['429'], '5xx': sent['5xx'] }));

    // Asked of every instance, later: the same figures (nothing counted twice on a flush).
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    const readers = new Map<string, string>();
    for (let i = 0; i < 12 && readers.size < 3; i++) {
      const answer = await trpcQuery<{ totals: Bucket }>('keyActivity.usage', { keyId: id });
      expect(answer.status).toBe(200);
      readers.set(answer.servedBy ?? '?', JSON.stringify(answer.data!.totals.read));
    }
    expect([...readers.keys()].sort()).toEqual(instanceNames(c).sort());
    expect(new Set(readers.values()).size).toBe(1);
  });

  it("finds an error body's request id within two seconds, whichever instance answered and whichever is asked", async () => {
    const { key, id } = await mintKey(c, DEMO_USERS.carol.email, `cluster request log ${Date.now()}`);
    cleanup.push(() => revokeKey(c, id));
    const errors = await Promise.all(
      Array.from({ length: 6 }, () => request(c, '/api/v1/contracts?limit=0', { headers: { 'x-api-key': key } })),
    );
    // Looked up at once, each from its own answer's arrival: all six within two seconds of it.
    await Promise.all(
      errors.map(async (error) => {
        expect(error.status).toBe(400);
        const requestId = (JSON.parse(error.body) as { request_id: string }).request_id;
        expect(requestId).toMatch(/^req_/);
        const left = 2_000 - (Date.now() - error.receivedAt * 1000);
        await expect
          .poll(async () => (await trpcQuery<{ status: number; path: string }>('keyActivity.findRequest', { requestId })).data?.status, { timeout: Math.max(left, 1), interval: 100 })
          .toBe(400);
      }),
    );
    expect(new Set(errors.map((e) => e.servedBy)).size).toBeGreaterThan(1);
  });
});
