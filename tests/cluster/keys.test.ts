import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_ORGS, DEMO_PASSWORD, DEMO_USERS } from '@/db/seed/demo';
import { hashToken, TOKEN_FORMATS } from '@/server/access/token-format';
import { cluster, freshLoopbackAddress, instanceNames, request, revokeKey, signIn, trpcMutation, type Answer, type Cluster } from './support';

/**
 * Least-privilege keys (docs/keys.md) on three instances that each cache verified keys
 * for 30 s: a rolled key's old secret stops on every instance at the end of its grace (or
 * at once without one), and "remove access" and an organisation's policy reach every
 * instance within a second (a key's scope is read with each request, not cached).
 */

let c: Cluster;
let sql: postgres.Sql;
const cleanup: (() => Promise<unknown>)[] = [];
beforeAll(() => {
  c = cluster();
  sql = postgres(c.primaryUrl, { max: 2, onnotice: () => {} });
});
afterAll(async () => {
  for (const undo of cleanup) await undo().catch(() => {});
  await sql?.end();
});

// From a client address of its own: the old secrets' 401s count as failed attempts of the
// address, and on the shared one they would use up the allowance that the later files'
// valid keys are served under (their requests answered 429).
const KEYS_CLIENT = freshLoopbackAddress();
const list = (key: string, query = '') => request(c, `/api/v1/contracts?limit=1${query}`, { headers: { 'x-api-key': key }, from: KEYS_CLIENT });

/** Sequential requests through the balancer (round robin) until every instance has answered `rounds` times. */
async function acrossInstances(send: () => Promise<Answer>, rounds = 2): Promise<Answer[]> {
  const answers: Answer[] = [];
  const names = instanceNames(c);
  const enough = () => names.every((n) => answers.filter((a) => a.servedBy === n).length >= rounds);
  for (let i = 0; i < names.length * rounds * 4 && !enough(); i++) answers.push(await send());
  expect(enough(), `answers by instance: ${answers.map((a) => a.servedBy).join(',')}`).toBe(true);
  return answers;
}
const statuses = (answers: Answer[]) => answers.map((a) => `${a.servedBy}:${a.status}`);
const all = (answers: Answer[], status: number) => answers.map((a) => `${a.servedBy}:${status}`);

describe('rolling, on every instance', () => {
  it("the previous secret works on every instance until the end of its grace, then none serves it, although each cached it", async () => {
    // A key rolled (as another instance would write it) with five seconds of grace left.
    const old = TOKEN_FORMATS.api_key.generate();
    const current = TOKEN_FORMATS.api_key.generate();
    const graceEnd = new Date(Date.now() + 5_000);
    const [row] = await sql<{ id: string }[]>`
      INSERT INTO access_tokens (user_id, created_by, kind, name, token_hash, hint, previous_token_hash, previous_expires_at)
      VALUES (${DEMO_USERS.carol.id}, ${DEMO_USERS.carol.id}, 'api_key', 'cluster roll grace', ${hashToken(current)}, ${TOKEN_FORMATS.api_key.hint(current)}, ${hashToken(old)}, ${graceEnd})
      RETURNING id`;
    cleanup.push(() => revokeKey(c, row!.id));
    // Every instance serves (and caches) both secrets.
    expect((await acrossInstances(() => list(old))).every((a) => a.status === 200)).toBe(true);
    expect((await acrossInstances(() => list(current))).every((a) => a.status === 200)).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, graceEnd.getTime() - Date.now())));
    const after = await acrossInstances(() => list(old));
    expect(statuses(after)).toEqual(all(after, 401));
    expect(Date.now() - graceEnd.getTime()).toBeLessThan(1_000 + 1_000 /* the requests themselves */);
    expect((await acrossInstances(() => list(current))).every((a) => a.status === 200)).toBe(true);
  });

  it('a roll without grace (Settings, on whichever instance) stops the old secret on every instance within a second; the new one works everywhere', async () => {
    const cookie = await signIn(c, DEMO_USERS.bob.email, DEMO_PASSWORD);
    const created = await trpcMutation<{ secret: string; token: { id: string } }>(c, cookie, 'apiKeys.create', { name: 'cluster roll now', expiresInDays: 7 });
    cleanup.push(() => revokeKey(c, created.data.token.id));
    const old = created.data.secret;
    expect((await acrossInstances(() => list(old))).every((a) => a.status === 200)).toBe(true);

    const rolled = await trpcMutation<{ secret: string }>(c, cookie, 'apiKeys.roll', { id: created.data.token.id, graceHours: 0 });
    const rolledAt = Date.now();
    const after = await acrossInstances(() => list(old));
    const elapsed = Date.now() - rolledAt;
    expect(statuses(after), `rolled on ${rolled.servedBy}`).toEqual(all(after, 401));
    expect(elapsed).toBeLessThan(1_000);
    expect((await acrossInstances(() => list(rolled.data.secret))).every((a) => a.status === 200)).toBe(true);
  });
});

describe("an organisation's oversight, on every instance", () => {
  const acme = `&organization_id=${DEMO_ORGS.acme.id}`;

  it("remove access: every instance refuses the member's key for that organisation within a second, and serves the rest", async () => {
    const bob = await signIn(c, DEMO_USERS.bob.email, DEMO_PASSWORD);
    const alice = await signIn(c, DEMO_USERS.alice.email, DEMO_PASSWORD);
    const created = await trpcMutation<{ secret: string; token: { id: string } }>(c, bob, 'apiKeys.create', { name: 'cluster remove access', expiresInDays: 7 });
    cleanup.push(() => revokeKey(c, created.data.token.id));
    const key = created.data.secret;
    expect((await acrossInstances(() => list(key, acme))).every((a) => a.status === 200)).toBe(true);

    await trpcMutation(c, alice, 'organizationKeys.removeAccess', { organizationId: DEMO_ORGS.acme.id, id: created.data.token.id });
    const removedAt = Date.now();
    const after = await acrossInstances(() => list(key, acme));
    const elapsed = Date.now() - removedAt;
    expect(statuses(after)).toEqual(all(after, 403));
    expect(elapsed).toBeLessThan(1_000);
    expect((await acrossInstances(() => list(key, `&organization_id=${DEMO_ORGS.globex.id}`))).every((a) => a.status === 200)).toBe(true);
  });

  it("the policy off: every instance leaves the organisation out for members' personal keys within a second", async () => {
    const bob = await signIn(c, DEMO_USERS.bob.email, DEMO_PASSWORD);
    const alice = await signIn(c, DEMO_USERS.alice.email, DEMO_PASSWORD);
    const created = await trpcMutation<{ secret: string; token: { id: string } }>(c, bob, 'apiKeys.create', { name: 'cluster policy', expiresInDays: 7 });
    cleanup.push(() => revokeKey(c, created.data.token.id));
    cleanup.push(() => sql`UPDATE organizations SET member_keys_allowed = true WHERE id = ${DEMO_ORGS.acme.id}`);
    const key = created.data.secret;
    expect((await acrossInstances(() => list(key, acme))).every((a) => a.status === 200)).toBe(true);

    await trpcMutation(c, alice, 'organizationKeys.setPolicy', { organizationId: DEMO_ORGS.acme.id, memberKeysAllowed: false });
    const changedAt = Date.now();
    const after = await acrossInstances(() => list(key, acme));
    expect(statuses(after)).toEqual(all(after, 403));
    expect(Date.now() - changedAt).toBeLessThan(1_000);

    await trpcMutation(c, alice, 'organizationKeys.setPolicy', { organizationId: DEMO_ORGS.acme.id, memberKeysAllowed: true });
    expect((await acrossInstances(() => list(key, acme))).every((a) => a.status === 200)).toBe(true);
  });
});
