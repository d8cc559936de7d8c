import { and, eq, sql } from 'drizzle-orm';
import { runStatement, type Database, type PreparableQuery, type Statement } from '../../client';
import { contracts } from '../../schema';
import { accessibleTo, accessValues, type CallerScope } from '../access';
import { detailColumns, type ContractDetailRow } from './columns';

/** One contract, if the scope may see it: a single query whatever the answer. */
export function contractStatement(scope: CallerScope, id: string): Statement<ContractDetailRow[]> {
  return {
    name: 'contracts.by-id',
    build: (db) =>
      db
        .select(detailColumns)
        .from(contracts)
        .where(and(eq(contracts.id, sql.placeholder('id')), accessibleTo()))
        .limit(1) as unknown as PreparableQuery<ContractDetailRow[]>,
    values: { id, ...accessValues(scope) },
  };
}

export async function selectContract(db: Database, scope: CallerScope, id: string): Promise<ContractDetailRow | undefined> {
  const [row] = await runStatement(db, contractStatement(scope, id));
  return row;
}
