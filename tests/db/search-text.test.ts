import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrateDatabase, type DatabaseHandle } from '@/db/client';
import { containsPattern } from '@/db/queries/contracts/expressions';
import { selectContractPage } from '@/db/queries/contracts/page';
import { createTestDatabase, describeDriver } from '../helpers/db';
import { migrationsBefore } from '../helpers/migrations-before';

/**
 * q searches contracts.search_text (migration 0015): the title and, once extracted, the
 * parties, lower-cased when the row is written, matched with `LIKE lower(pattern)`. It
 * must find exactly what `ILIKE` over the same text found before (which lower-cases both
 * sides in a UTF-8 database), for rows written before the migration and after it, in the
 * database's own case rules (Postgres and PGlite alike), wildcards taken literally.
 */

const MIGRATED_BEFORE = 15; // 0000..0014: search by ILIKE over an expression
const USER = '00000000-0000-4000-8000-00000000e001';
const scope = { userId: USER, organizationIds: [] };

// Titles and parties with the cases that differ between case rules: accents, a German
// sharp s, Greek final sigma, a dotted capital I, CJK, an emoji, and LIKE's own wildcards.
const TEXTS: [title: string, status: string, provider: string | null, client: string | null][] = [
  ['Büro Zürich Lease', 'completed', 'ZÜRICH Versicherung', 'Acme'],
  ['ÉCOLE supply', 'completed', 'École Normale', null],
  ['Straße maintenance', 'completed', 'STRASSE GmbH', 'Hooli'],
  ['ΣΟΦΊΑ consulting', 'completed', 'σοφία ltd', 'Globex'],
  ['İstanbul office', 'completed', 'ISTANBUL Holdings', null],
  ['東京オフィス 🚀 lease', 'completed', '株式会社 東京', 'Initech'],
  ['Discount 50% deal', 'completed', 'a_b partners', 'back\\slash Ltd'],
  ['Pending upload', 'pending', 'Initech', 'Umbrella'],
  ['Processing INITECH renewal', 'processing', null, null],
  ['Mixed CaSe Title', 'failed', 'Wayne', 'Stark'],
];
const SEARCHES = [
  'zürich', 'ZÜRICH', 'école', 'ÉCOLE', 'ecole', 'straße', 'STRASSE', 'strasse', 'σοφία', 'ΣΟΦΊΑ', 'σοφια', 'istanbul', 'İSTANBUL', 'i̇stanbul',
  '東京', '🚀', '50%', '50%%', 'a_b', 'a_', '_', '%', 'back\\slash', '\\', 'initech', 'INITECH', 'umbrella', 'mixed case', 'e\nacme', 'lease',
];

const idOf = (i: number) => `00000000-0000-4000-8000-${String(i + 1).padStart(12, '0')}`;
const OLD_SEARCH_TEXT = `(title || E'\\n' || CASE WHEN status = 'completed' THEN coalesce(provider, '') || E'\\n' || coalesce(client, '') ELSE '' END)`;

let handle: DatabaseHandle;
let before: ReturnType<typeof migrationsBefore>;
const foundBefore = new Map<string, string[]>();

beforeAll(async () => {
  before = migrationsBefore(MIGRATED_BEFORE);
  handle = await createTestDatabase({ migrationsFolder: before.folder });
  await handle.query(`insert into users (id, email) values ($1, 'search-text@example.com')`, [USER]);
  for (const [i, [title, status, provider, client]] of TEXTS.entries()) {
    await handle.query(
      `insert into contracts (id, owner_id, title, status, file_name, file_size, provider, client) values ($1, $2, $3, $4::contract_status, 'f.pdf', 1, $5, $6)`,
      [idOf(i), USER, title, status, provider, client],
    );
  }
  // What q found before the migration: ILIKE over the expression.
  for (const q of SEARCHES) {
    const rows = await handle.query<{ id: string }>(`select id from contracts where ${OLD_SEARCH_TEXT} ILIKE $1 order by id`, [containsPattern(q)]);
    foundBefore.set(q, rows.map((r) => r.id));
  }
  await migrateDatabase(handle.db, handle.driver);
}, 120_000);
afterAll(async () => {
  await handle?.close();
  before?.remove();
});

const search = async (q: string) => (await selectContractPage(handle.db, scope, { search: q }, { limit: 100, sort: { field: 'title', descending: false } })).map((r) => r.id).sort();
const ilike = async (q: string) =>
  (await handle.query<{ id: string }>(`select id from contracts where ${OLD_SEARCH_TEXT} ILIKE $1 order by id`, [containsPattern(q)])).map((r) => r.id);

describe(`q over the stored search text (${describeDriver()})`, () => {
  it('finds exactly what ILIKE found before migration 0015, for every row written before it', async () => {
    // The searches are not vacuous: most find something, some find nothing.
    expect([...foundBefore.values()].filter((ids) => ids.length > 0).length).toBeGreaterThan(SEARCHES.length / 2);
    // Wildcards are literal: '%' finds the one text that holds a per cent sign, '_' the one with an underscore.
    expect(foundBefore.get('%')).toEqual([idOf(6)]);
    expect(foundBefore.get('_')).toEqual([idOf(6)]);
    for (const q of SEARCHES) expect(await search(q), JSON.stringify(q)).toEqual(foundBefore.get(q));
  });

  it('keeps the stored text in step with every write: a new row, a changed title, parties shown once completed', async () => {
    const id = idOf(100);
    await handle.query(
      `insert into contracts (id, owner_id, title, status, file_name, file_size, provider) values ($1, $2, 'Fresh ÜBER deal', 'processing', 'f.pdf', 1, 'Vandelay')`,
      [id, USER],
    );
    expect(await search('über')).toContain(id);
    // The provider is searched only once the contract is completed.
    expect(await search('vandelay')).not.toContain(id);
    await handle.query(`update contracts set status = 'completed' where id = $1`, [id]);
    expect(await search('vandelay')).toContain(id);
    await handle.query(`update contracts set title = 'Renamed' where id = $1`, [id]);
    expect(await search('über')).not.toContain(id);
    expect(await search('renamed')).toContain(id);
    // And still what ILIKE over the columns finds, for every search.
    for (const q of [...SEARCHES, 'über', 'vandelay', 'renamed']) expect(await search(q), JSON.stringify(q)).toEqual(await ilike(q));
  });

  it('cannot be written: the column is generated from the others', async () => {
    await expect(handle.query(`update contracts set search_text = 'forged' where id = $1`, [idOf(0)])).rejects.toThrow(/generated|only be updated to DEFAULT/i);
  });
});
