import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '@/db/client';
import { accessShape, type CallerScope } from '@/db/queries/access';
import { currentEventPosition, pruneEventList, readEventHorizon, selectEventPage, type ListedEvent } from '@/db/queries/events';
import { memberships, organizations, users } from '@/db/schema';
import { createTestDatabase, PREPARE } from '../helpers/db';

/**
 * The event list's order (migration 0021): positions are given at commit, in commit order,
 * so a reader walking "after the last position seen" never skips an event that commits
 * after it passed (as a reader walking by insert order, webhook_events.seq, would) and never
 * meets one twice; a rolled-back write leaves none. Concurrent writers need a server:
 * Postgres only (PGlite has one connection).
 */

const USER = '00000000-0000-4000-8000-0000000e0001';
const OTHER = '00000000-0000-4000-8000-0000000e0002';
const ORG = '00000000-0000-4000-8000-0000000e00a1';
// One organisation per concurrent writer: writers of one scope wait for each other on its
// counter rows (contract_counts), which would order their commits for them.
const WRITER_ORGS = Array.from({ length: 8 }, (_, i) => `00000000-0000-4000-8000-0000000e00b${i}`);
const scope: CallerScope = { userId: USER, organizationIds: [ORG, ...WRITER_ORGS] };
const shape = accessShape(scope, undefined)!;

let handle: DatabaseHandle & { url?: string };

beforeAll(async () => {
  handle = await createTestDatabase();
  await handle.db.insert(users).values([
    { id: USER, email: 'event-list@example.com' },
    { id: OTHER, email: 'event-list-other@example.com' },
  ]);
  await handle.db.insert(organizations).values([ORG, ...WRITER_ORGS].map((id, i) => ({ id, name: `Events ${i}` })));
  await handle.db.insert(memberships).values([ORG, ...WRITER_ORGS].map((organizationId) => ({ userId: USER, organizationId })));
});
afterAll(() => handle?.close());

/** Every event of the caller after `after`, page by page (as a poller would). */
async function readAll(after: number, limit = 7): Promise<ListedEvent[]> {
  const seen: ListedEvent[] = [];
  for (;;) {
    const page = await selectEventPage(handle.db, scope, shape, { after, limit });
    seen.push(...page);
    if (page.length < limit) return seen;
    after = page.at(-1)!.position;
  }
}

const insertContract = (title: string, organizationId: string | null = null, owner = USER) =>
  `INSERT INTO contracts (owner_id, organization_id, title, file_name, file_size) VALUES ('${owner}', ${organizationId ? `'${organizationId}'` : 'NULL'}, '${title}', 'e.pdf', 1)`;

describe('the event list', () => {
  it('lists the caller\'s events in commit order, by path, of the chosen types, and none of a rolled-back write or of another tenant', async () => {
    const start = await currentEventPosition(handle.db);
    await handle.query(insertContract('Personal one'));
    await handle.query(insertContract('Org one', ORG));
    await handle.query(insertContract('Someone elses', null, OTHER));
    await handle.db
      .transaction(async (tx) => {
        await tx.execute(insertContract('Never committed'));
        throw new Error('rollback');
      })
      .catch(() => {});
    await handle.query(`UPDATE contracts SET title = 'Org one, renamed' WHERE title = 'Org one'`);
    const events = await readAll(start, 2);
    expect(events.map((e) => [e.type, (e.contract as { title: string }).title])).toEqual([
      ['contract.created', 'Personal one'],
      ['contract.created', 'Org one'],
      ['contract.updated', 'Org one, renamed'],
    ]);
    expect(events.map((e) => e.position)).toEqual([...events.map((e) => e.position)].sort((a, b) => a - b));
    const updates = await selectEventPage(handle.db, scope, shape, { after: start, limit: 10, types: ['contract.updated'] });
    expect(updates.map((e) => e.type)).toEqual(['contract.updated']);
    const orgOnly = await selectEventPage(handle.db, scope, accessShape(scope, ORG)!, { after: start, limit: 10 });
    expect(orgOnly.map((e) => e.organizationId)).toEqual([ORG, ORG]);
    expect(await handle.query(`SELECT * FROM event_list_commits`)).toEqual([]);
  });
});

describe('retention', () => {
  it('moves the horizon past what it removes, stopping at the first younger event, even after event_list_horizon was emptied', async () => {
    // A reset of every table (the shared test project's reused databases) empties the migration's row too.
    await handle.query('DELETE FROM event_list_horizon');
    await handle.query(insertContract('Old enough'));
    const [old] = await handle.query<{ position: string; occurred_at: Date }>(`SELECT position::text, occurred_at FROM webhook_events WHERE contract->>'title' = 'Old enough'`);
    await new Promise((resolve) => setTimeout(resolve, 20));
    const cutoff = new Date();
    await new Promise((resolve) => setTimeout(resolve, 20));
    await handle.query(insertContract('Younger'));
    expect(await pruneEventList(handle.db, cutoff, 1000)).toBeGreaterThan(0);
    const horizon = await readEventHorizon(handle.db);
    expect(horizon.prunedThrough).toBe(Number(old!.position));
    const left = await readAll(0, 100);
    expect(left.map((e) => (e.contract as { title: string }).title)).toContain('Younger');
    expect(left.every((e) => e.position > horizon.prunedThrough)).toBe(true);
  });
});

describe.skipIf(!process.env.DATABASE_URL)('with concurrent writers (Postgres)', () => {
  const connect = () => postgres(handle.url!, { max: 1, prepare: PREPARE, onnotice: () => {} });

  it('an event that commits after a later-inserted one is read after it, not skipped (as reading by insert order would)', async () => {
    const first = connect();
    const second = connect();
    const slow = await first.reserve();
    const fast = await second.reserve();
    try {
      const start = await currentEventPosition(handle.db);
      await slow`BEGIN`;
      await slow.unsafe(insertContract('Inserted first, committed last', WRITER_ORGS[0]));
      await fast`BEGIN`;
      await fast.unsafe(insertContract('Inserted second, committed first', WRITER_ORGS[1]));
      await fast`COMMIT`;
      const before = await readAll(start);
      expect(before.map((e) => (e.contract as { title: string }).title)).toEqual(['Inserted second, committed first']);
      await slow`COMMIT`;
      const after = await readAll(before.at(-1)!.position);
      expect(after.map((e) => (e.contract as { title: string }).title)).toEqual(['Inserted first, committed last']);
      // By insert order the first would have been skipped: its seq is below the one already read.
      const seqs = await handle.query<{ title: string; seq: string }>(
        `SELECT contract->>'title' AS title, seq::text FROM webhook_events WHERE contract->>'title' LIKE 'Inserted %' ORDER BY seq`,
      );
      expect(seqs.map((s) => s.title)).toEqual(['Inserted first, committed last', 'Inserted second, committed first']);
    } finally {
      slow.release();
      fast.release();
      await Promise.all([first.end({ timeout: 1 }), second.end({ timeout: 1 })]);
    }
  });

  it('a reader polling while eight writers commit and roll back at random reads every committed event once, in position order', async () => {
    const start = await currentEventPosition(handle.db);
    const writers = Array.from({ length: 8 }, connect);
    let done = false;
    let random = 35;
    const next = () => ((random = (random * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
    const read: ListedEvent[] = [];
    const reader = (async () => {
      let after = start;
      for (;;) {
        const finished = done;
        const page = await selectEventPage(handle.db, scope, shape, { after, limit: 5 });
        read.push(...page);
        if (page.length > 0) after = page.at(-1)!.position;
        else if (finished) return;
        else await sleep(next() * 3);
      }
    })();
    try {
      await Promise.all(
        writers.map(async (writer, w) => {
          for (let t = 0; t < 15; t++) {
            const conn = await writer.reserve();
            await conn`BEGIN`;
            const rows = 1 + Math.floor(next() * 3);
            for (let r = 0; r < rows; r++) await conn.unsafe(insertContract(`w${w} t${t} r${r}`, WRITER_ORGS[w]));
            if (next() < 0.5) await conn.unsafe(`UPDATE contracts SET title = title || ' (edited)' WHERE title LIKE 'w${w} t${t} r%'`);
            await sleep(next() * 8);
            await conn.unsafe(next() < 0.2 ? 'ROLLBACK' : 'COMMIT');
            conn.release();
          }
        }),
      );
    } finally {
      done = true;
      await reader;
      await Promise.all(writers.map((w) => w.end()));
    }
    const committed = await readAll(start, 100);
    expect(committed.length).toBeGreaterThan(100);
    expect(read.map((e) => e.id)).toEqual(committed.map((e) => e.id));
    expect(new Set(read.map((e) => e.id)).size).toBe(read.length);
    expect(read.some((e) => (e.contract as { title: string }).title.endsWith('(edited)'))).toBe(true);
  }, 60_000);
});
