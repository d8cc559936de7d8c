import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { flatRowMapper, runStatement, type DatabaseHandle, type Statement } from '@/db/client';
import { contractStatement } from '@/db/queries/contracts/by-id';
import { detailColumns, summaryColumns } from '@/db/queries/contracts/columns';
import { contractCountStatement } from '@/db/queries/contracts/count';
import { contractPageStatement } from '@/db/queries/contracts/page';
import { membershipsStatement } from '@/db/queries/memberships';
import { tokenByHashStatement } from '@/db/queries/tokens';
import { DEMO_USERS, seedDemo } from '@/db/seed/demo';
import { loadScope } from '@/server/access/scope';
import { toContractFilters, toSort } from '@/server/contracts/query';
import { createTestDatabase } from '../helpers/db';

/**
 * runStatement maps the rows of a flat selection with a mapper compiled once per prepared
 * statement (db/client.ts flatRowMapper) instead of Drizzle's per-row mapResultRow: the
 * rows must be exactly Drizzle's, value types (Date, numbers, null) and key order included.
 */
describe('flat row mapper', () => {
  let handle: DatabaseHandle;
  beforeAll(async () => {
    handle = await createTestDatabase();
    await seedDemo(handle.db);
  });
  afterAll(async () => {
    await handle?.close();
  });

  it('gives the rows Drizzle gives, for every statement of the list, get-one and export paths', async () => {
    const { db } = handle;
    const { scope } = await loadScope(db, DEMO_USERS.bob.id);
    const statements: Statement<unknown>[] = [
      membershipsStatement(DEMO_USERS.bob.id) as Statement<unknown>,
      tokenByHashStatement('api_key', 'x'.repeat(64)) as Statement<unknown>,
      contractPageStatement(scope, {}, { limit: 51, offset: 0 }, summaryColumns)!,
      contractPageStatement(scope, toContractFilters({ auto_renewal: true }), { limit: 10, offset: 0, sort: toSort('-renewal_date') }, detailColumns)!,
      contractCountStatement(scope, {})!,
    ];
    const [first] = (await runStatement(db, statements[2]!)) as { id: string }[];
    statements.push(contractStatement(scope, first!.id) as Statement<unknown>);
    let mapped = 0;
    for (const statement of statements) {
      // Drizzle's own mapping: the same query, executed without a custom mapper.
      const expected = await statement.build(db).execute(statement.values);
      const actual = await runStatement(db, statement);
      expect(actual, statement.name).toEqual(expected);
      for (const [a, e] of (actual as Record<string, unknown>[]).map((row, i) => [row, (expected as Record<string, unknown>[])[i]!])) {
        expect(Object.keys(a!)).toEqual(Object.keys(e!));
        for (const key of Object.keys(e!)) expect(a![key]?.constructor, `${statement.name}.${key}`).toBe(e![key]?.constructor);
      }
      const prepared = statement.build(db).prepare('row-mapper-probe') as unknown as { fields?: never };
      if (flatRowMapper(prepared.fields)) mapped++;
    }
    // Every statement of these paths is a flat selection, so none falls back to mapResultRow.
    expect(mapped).toBe(statements.length);
    expect((await runStatement(db, statements[2]!) as unknown[]).length).toBeGreaterThan(0);
  });

  it('declines nested selections, which it does not map', () => {
    expect(flatRowMapper([{ path: ['a', 'b'], field: summaryColumns.id }])).toBeUndefined();
    expect(flatRowMapper([])).toBeUndefined();
    expect(flatRowMapper(undefined)).toBeUndefined();
  });
});
