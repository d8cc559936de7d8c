import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '@/db/client';
import { contractPageStatement } from '@/db/queries/contracts/page';
import { contracts, users, type NewContract } from '@/db/schema';
import { StatementTexts } from '../../scripts/bench/statements';
import { createTestDatabase } from '../helpers/db';

/**
 * A page after a cursor starts its index scan at the cursor, for every sort: the 10,000th
 * page costs what the first does. Checked on the plan (with sequential scans and sorts
 * priced out, so that a small table still shows which index ranges a statement can use):
 * after a non-null key of a nullable sort, the row comparison must be an index condition,
 * not a filter applied to every row before the cursor.
 */

let handle: DatabaseHandle;
const USER = '00000000-0000-4000-8000-0000000f0001';
const scope = { userId: USER, organizationIds: [] };

beforeAll(async () => {
  handle = await createTestDatabase();
  await handle.db.insert(users).values({ id: USER, email: 'keyset@example.com' });
  const rows: NewContract[] = Array.from({ length: 50 }, (_, i) => ({
    ownerId: USER, title: `T${i}`, status: 'completed', fileName: 'f.pdf', fileSize: 1,
    contractValue: i % 5 === 0 ? null : i, expirationDate: i % 4 === 0 ? null : `2027-01-${String(1 + (i % 28)).padStart(2, '0')}`,
  }));
  await handle.db.insert(contracts).values(rows);
  await handle.query('ANALYZE contracts');
});
afterAll(async () => handle?.close());

async function plan(sort: { field: 'contract_value' | 'expiration_date' | 'title'; descending: boolean }, key: string): Promise<string> {
  const statement = contractPageStatement(scope, {}, { limit: 10, sort, after: { key, id: '00000000-0000-4000-8000-000000000000' } })!;
  const { text, params } = new StatementTexts(handle.db).compile(statement as never);
  await handle.query('SET enable_seqscan = off');
  await handle.query('SET enable_sort = off');
  try {
    const rows = await handle.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${text}`, params);
    return rows.map((r) => r['QUERY PLAN']).join('\n');
  } finally {
    await handle.query('RESET enable_seqscan');
    await handle.query('RESET enable_sort');
  }
}

describe('keyset pages', () => {
  it.each([
    [{ field: 'contract_value', descending: true }, '20'],
    [{ field: 'contract_value', descending: false }, '20'],
    [{ field: 'expiration_date', descending: true }, '2027-01-10'],
    [{ field: 'expiration_date', descending: false }, '2027-01-10'],
    [{ field: 'title', descending: false }, 't20'],
  ] as const)('%j after a key: the index scan starts at the cursor', async (sort, key) => {
    const text = await plan(sort, key);
    expect(text).toMatch(/Index Cond: \(\(owner_id = [^\n]*ROW\(/);
    expect(text).not.toMatch(/Filter: [^\n]*ROW\(/);
  });
});
