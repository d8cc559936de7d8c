import fc from 'fast-check';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '@/db/client';
import { contracts, memberships, organizations, users, type NewContract } from '@/db/schema';
import { DEMO_USERS, seedDemo } from '@/db/seed/demo';
import { SORT_VALUES, type SortValue } from '@/lib/contracts';
import { setProcessDatabase } from '@/server/database';
import { apiRequest, PROXY_CLIENT_ADDRESS, send, type Answer } from '../helpers/api';
import { configureForFile } from '../helpers/config';
import { createTestDatabase } from '../helpers/db';
import { newApiKey } from '../helpers/tokens';

/**
 * Cursor pagination (docs/api-decisions.md, Additions): `pagination.next_cursor` and `has_more`,
 * `cursor` in the request, `Link: <…>; rel="next"`, for every sort; a cursor with a
 * non-zero offset, or from another query, is a 400; walking every page by cursor yields
 * the filtered set exactly once, in order, while contracts are inserted and updated.
 */

configureForFile({ ...PROXY_CLIENT_ADDRESS, RATE_LIMIT_GENERAL_PER_WINDOW: '1000000', RATE_LIMIT_AUTH_FAILURES_PER_MINUTE: '1000000' });

let handle: DatabaseHandle;
const keys: Record<string, string> = {};
beforeAll(async () => {
  handle = await createTestDatabase();
  setProcessDatabase(handle);
  await seedDemo(handle.db);
  for (const user of ['alice', 'bob'] as const) keys[user] = (await newApiKey(handle.db, DEMO_USERS[user].id)).key;
});
afterAll(async () => handle?.close());

type Page = { data: { contracts: { id: string }[]; pagination: { limit: number; offset: number; total: number; next_cursor: string | null; has_more: boolean } } };

const get = (query: string, key = keys.bob!) => send(apiRequest('GET', `/contracts?${query}`, { key, headers: { 'X-Forwarded-Host': 'contracts.example.com', 'X-Forwarded-Proto': 'https' } }));

/** Every page of a query by cursor: the ids in order, and the answers. */
async function walk(query: string, key?: string, from: string | null = null): Promise<{ ids: string[]; answers: Answer[] }> {
  const ids: string[] = [];
  const answers: Answer[] = [];
  let cursor: string | null = from;
  for (let i = 0; i < 200; i++) {
    const answer = await get(`${query}${cursor ? `&cursor=${cursor}` : ''}`, key);
    expect(answer.status, answer.text).toBe(200);
    answers.push(answer);
    const { contracts: page, pagination } = (answer.json as Page).data;
    ids.push(...page.map((c) => c.id));
    expect(pagination.has_more).toBe(pagination.next_cursor !== null);
    cursor = pagination.next_cursor;
    if (!cursor) return { ids, answers };
  }
  throw new Error('more than 200 pages');
}

describe('cursor pagination', () => {
  it.each(SORT_VALUES)('sort=%s: the pages by cursor are the list by offset, with a Link to each next page', async (sort) => {
    const all = (await get(`sort=${sort}&limit=100`)).json as Page;
    const { ids, answers } = await walk(`sort=${sort}&limit=3`);
    expect(ids).toEqual(all.data.contracts.map((c) => c.id));
    expect(new Set(ids).size).toBe(ids.length);
    for (const answer of answers) {
      const { next_cursor, offset, total } = (answer.json as Page).data.pagination;
      expect(offset).toBe(0);
      expect(total).toBe(all.data.pagination.total);
      const link = answer.headers.get('link');
      if (next_cursor === null) {
        expect(link).toBeNull();
      } else {
        const target = /^<([^>]+)>; rel="next"$/.exec(link ?? '')?.[1];
        expect(target, link ?? '').toBeDefined();
        const url = new URL(target!);
        expect(url.origin).toBe('https://contracts.example.com');
        expect(url.pathname).toBe('/api/v1/contracts');
        expect(url.searchParams.get('cursor')).toBe(next_cursor);
        expect(url.searchParams.get('sort')).toBe(sort);
        expect(url.searchParams.has('offset')).toBe(false);
      }
    }
  });

  it('names the next page from an offset page too, and continues where that page ended', async () => {
    const first = (await get('limit=4&offset=2')).json as Page;
    const rest = await walk('limit=5', undefined, first.data.pagination.next_cursor);
    const all = (await get('limit=100')).json as Page;
    expect([...first.data.contracts.map((c) => c.id), ...rest.ids]).toEqual(all.data.contracts.slice(2).map((c) => c.id));
  });

  it('keeps the filters: a filtered walk is the filtered list', async () => {
    const all = (await get('status=completed&sort=-contract_value&limit=100')).json as Page;
    expect((await walk('status=completed&sort=-contract_value&limit=2')).ids).toEqual(all.data.contracts.map((c) => c.id));
  });

  it('refuses a cursor with a non-zero offset, from another query, or made by hand: 400 naming cursor, never 500', async () => {
    const next = ((await get('limit=2&sort=title')).json as Page).data.pagination.next_cursor!;
    const forged = (value: unknown[]) => Buffer.from(JSON.stringify(value)).toString('base64url');
    const cases: [string, RegExp][] = [
      [`limit=2&sort=title&offset=3&cursor=${next}`, /leave offset out/],
      [`limit=2&sort=-title&cursor=${next}`, /another query/],
      [`limit=2&sort=title&status=completed&cursor=${next}`, /another query/],
      [`limit=2&sort=title&cursor=not-a-cursor`, /not a cursor/],
      [`limit=2&sort=title&cursor=${next.slice(0, -3)}`, /not a cursor/],
      [`limit=2&sort=title&cursor=${forged([1, 'title', "x'); DROP TABLE contracts; --", 'nope', 'x'])}`, /not a cursor|another query/],
      [`limit=2&sort=created_at&cursor=${forged([1, 'created_at', '1 day', '00000000-0000-4000-8000-000000000000', 'x'])}`, /not a cursor|another query/],
      [`limit=2&cursor=%2B%2F`, /next_cursor/],
      [`limit=2&cursor=${'A'.repeat(3000)}`, /next_cursor/],
    ];
    for (const [query, message] of cases) {
      const answer = await get(query);
      expect(answer.status, `${query}: ${answer.text}`).toBe(400);
      const body = answer.json as { error: { message: string; details: { param?: string }[] } };
      expect(body.error.details[0]?.param, query).toBe('cursor');
      expect(body.error.message, query).toMatch(message);
    }
    // offset=0 with a cursor is the same as none.
    expect((await get(`limit=2&sort=title&offset=0&cursor=${next}`)).status).toBe(200);
  });
});

describe('walking by cursor while contracts change', () => {
  const OWNER = '00000000-0000-4000-8000-00000000e001';
  const ORG = '00000000-0000-4000-8000-00000000e0a1';
  let key: string;
  let serial = 0;
  beforeAll(async () => {
    await handle.db.insert(users).values({ id: OWNER, email: 'walker@example.com' });
    await handle.db.insert(organizations).values({ id: ORG, name: 'Walkers' });
    await handle.db.insert(memberships).values({ userId: OWNER, organizationId: ORG });
    key = (await newApiKey(handle.db, OWNER, { name: 'walk' })).key;
  });

  const at = (minute: number) => new Date(Date.UTC(2026, 0, 1, 0, minute));
  /** A contract of the walker: personal or the organisation's, with values that often tie. */
  const contractArb = fc.record({
    inOrg: fc.boolean(),
    minute: fc.integer({ min: 0, max: 20 }),
    title: fc.constantFrom('alpha', 'Beta', 'gamma', 'delta'),
    value: fc.option(fc.constantFrom(10, 20, 30), { nil: null }),
    expiration: fc.option(fc.constantFrom('2027-01-01', '2027-06-01'), { nil: null }),
    status: fc.constantFrom('completed' as const, 'pending' as const),
  });
  type Generated = { inOrg: boolean; minute: number; title: string; value: number | null; expiration: string | null; status: 'completed' | 'pending' };
  const toRow = (c: Generated): NewContract => ({
    id: `00000000-0000-4000-8000-${String(++serial).padStart(12, '0')}`,
    ownerId: OWNER,
    organizationId: c.inOrg ? ORG : null,
    title: c.title,
    status: c.status,
    fileName: 'f.pdf',
    fileSize: 1,
    createdAt: at(c.minute),
    updatedAt: at(c.minute),
    contractValue: c.value,
    currency: c.value === null ? null : 'EUR',
    expirationDate: c.expiration,
  });

  it('yields every contract that was there all along exactly once and in order, whatever is inserted or changed meanwhile', async () => {
    // Sorts whose key an update below leaves alone (the update changes the summary only);
    // updated_at, whose key a change does move, has the sync walk below.
    const sorts = SORT_VALUES.filter((s): s is SortValue => !s.endsWith('updated_at'));
    await fc.assert(
      fc.asyncProperty(
        fc.array(contractArb, { minLength: 1, maxLength: 25 }),
        fc.array(contractArb, { maxLength: 6 }),
        fc.constantFrom(...sorts),
        fc.integer({ min: 1, max: 7 }),
        // No filter, or one that keeps part of the rows (served by counters, a date range, a search).
        fc.constantFrom('', 'status=completed&', 'expires_before=2027-03-01&', 'q=ta&', `organization_id=${ORG}&`),
        async (initial, inserted, sort, limit, filter) => {
          await handle.db.delete(contracts).where(eq(contracts.ownerId, OWNER));
          const rows = initial.map(toRow);
          await handle.db.insert(contracts).values(rows);
          const list = async () => ((await get(`${filter}sort=${sort}&limit=100`, key)).json as Page).data;
          const before = await list();
          const order = before.contracts.map((c) => c.id);
          expect(before.pagination.total).toBe(order.length);
          if (filter === '') expect([...order].sort()).toEqual(rows.map((r) => r.id!).sort());

          const seen: string[] = [];
          let cursor: string | null = null;
          let page = 0;
          do {
            const answer = await get(`${filter}sort=${sort}&limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`, key);
            expect(answer.status, answer.text).toBe(200);
            const data = (answer.json as Page).data;
            seen.push(...data.contracts.map((c) => c.id));
            cursor = data.pagination.next_cursor;
            // Between pages: a new contract, and a change to one already listed or still to come.
            const extra = inserted[page];
            if (extra) await handle.db.insert(contracts).values(toRow(extra));
            const touched = rows[(page * 7) % rows.length]!;
            await handle.db.update(contracts).set({ summary: `seen ${page}` }).where(eq(contracts.id, touched.id!));
            page++;
          } while (cursor);

          // The contracts present from the start: each exactly once, in the list's order.
          const original = new Set(order);
          expect(seen.filter((id) => original.has(id))).toEqual(order);
          // Nothing twice, new ones included.
          expect(new Set(seen).size).toBe(seen.length);
          // Only rows of the filtered set (the updates leave the filtered fields alone), and
          // the total counts the set as it is now.
          const after = await list();
          const now = new Set(after.contracts.map((c) => c.id));
          expect(seen.filter((id) => !now.has(id))).toEqual([]);
          expect(after.pagination.total).toBe(now.size);
        },
      ),
      { numRuns: 40, seed: 20261124 },
    );
  }, 120_000);

  it('sort=updated_at, the sync walk: a contract changed during the walk moves ahead of the cursor and comes again; none is skipped', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(contractArb, { minLength: 1, maxLength: 25 }),
        fc.integer({ min: 1, max: 7 }),
        // The whole list, or a sync since minute 10 (rows before it enter the set when changed).
        fc.constantFrom('', `updated_since=${at(10).toISOString()}&`),
        fc.array(fc.nat(), { minLength: 1, maxLength: 8 }),
        async (initial, limit, filter, picks) => {
          await handle.db.delete(contracts).where(eq(contracts.ownerId, OWNER));
          const rows = initial.map(toRow);
          await handle.db.insert(contracts).values(rows);
          const order = ((await get(`${filter}sort=updated_at&limit=100`, key)).json as Page).data.contracts.map((c) => c.id);

          const seen: string[] = [];
          const touches: { id: string; seenBefore: number }[] = [];
          let cursor: string | null = null;
          let page = 0;
          do {
            const answer = await get(`${filter}sort=updated_at&limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`, key);
            expect(answer.status, answer.text).toBe(200);
            const data = (answer.json as Page).data;
            seen.push(...data.contracts.map((c) => c.id));
            cursor = data.pagination.next_cursor;
            // Between pages, as a writer would: a change to any contract, read or not, stamps
            // it later than every key so far (the extraction pipeline sets updated_at).
            const pick = picks[page];
            if (cursor && pick !== undefined) {
              const touched = rows[pick % rows.length]!;
              await handle.db.update(contracts).set({ summary: `changed ${page}`, updatedAt: at(1000 + page) }).where(eq(contracts.id, touched.id!));
              touches.push({ id: touched.id!, seenBefore: seen.length });
            }
            page++;
          } while (cursor);

          // Nothing that matched at the start is skipped, and each change is delivered after it was made.
          for (const id of order) expect(seen).toContain(id);
          for (const { id, seenBefore } of touches) expect(seen.slice(seenBefore), `changed ${id}`).toContain(id);
          // Contracts left alone come exactly once, in the list's order.
          const changed = new Set(touches.map((t) => t.id));
          const untouched = order.filter((id) => !changed.has(id));
          expect(seen.filter((id) => untouched.includes(id))).toEqual(untouched);
          // A contract comes at most once more than it was changed.
          for (const id of new Set(seen)) {
            expect(seen.filter((x) => x === id).length).toBeLessThanOrEqual(1 + touches.filter((t) => t.id === id).length);
          }
        },
      ),
      { numRuns: 40, seed: 20261126 },
    );
  }, 120_000);
});
