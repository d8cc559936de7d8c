import { and, sql } from 'drizzle-orm';
import { runStatement, type Database, type Statement } from '../../client';
import { contracts } from '../../schema';
import { accessShape, countPaths, countPathValues, type CallerScope } from '../access';
import { filterShape, filterShapeName, isCommonFilterShape, type ContractFilters } from './filters';

/**
 * How many contracts of a scope match: one count per access path of a count (personal,
 * and all organisations at once), summed. With a status filter the narrow
 * (owner, status) and (organisation, status) indexes bound each scan to that status.
 */
export function contractCountStatement(scope: CallerScope, filters: ContractFilters): Statement<{ n: number }[]> | undefined {
  const shape = accessShape(scope, filters.organizationId);
  if (!shape) return undefined;
  const filter = filterShape(filters);
  const build = (db: Database) => {
    const count = sql<number>`count(*)::int`.as('n');
    const selects = countPaths(shape).map((path) => db.select({ n: count }).from(contracts).where(and(path, ...filter.clauses)));
    const [first, ...rest] = selects as [(typeof selects)[number], ...typeof selects];
    return rest.reduce<ReturnType<typeof first.unionAll>>((q, b) => q.unionAll(b), first as never);
  };
  return {
    name: ['contracts.count', shape.personal ? 'personal+orgs' : 'orgs', filterShapeName(filter)].join(' '),
    build: build as unknown as Statement<{ n: number }[]>['build'],
    values: { ...countPathValues(scope, shape), ...filter.values },
    prepareOnServer: isCommonFilterShape(filter),
  };
}

export async function countContracts(db: Database, scope: CallerScope, filters: ContractFilters): Promise<number> {
  const statement = contractCountStatement(scope, filters);
  if (!statement) return 0;
  const rows = await runStatement(db, statement);
  return rows.reduce((sum, r) => sum + Number(r.n), 0);
}
