import type { Sql } from './setup';
import type { Compiled } from './statements';

/**
 * Postgres's own time for a statement, from EXPLAIN ANALYZE (TIMING OFF, so per-node
 * clock reads do not inflate it), median of several runs, two ways:
 * - custom: the statement sent with its values, planned for them (unnamed statements);
 * - prepared: PREPARE, then EXECUTE until the plan cache settles (6 runs), then
 *   EXPLAIN ANALYZE EXECUTE: what a named prepared statement costs, planning included.
 */
export interface ExplainResult {
  name: string;
  custom: { planningMs: number; executionMs: number; sharedHit: number; sharedRead: number };
  prepared: { planningMs: number; executionMs: number; sharedHit: number; sharedRead: number; generic: boolean };
  plan: string;
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

function literal(value: unknown): string {
  if (value === null || value === undefined) return 'NULL';
  if (typeof value === 'number' || typeof value === 'bigint') return String(value);
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (value instanceof Date) return `'${value.toISOString()}'`;
  if (Array.isArray(value)) return literal(`{${value.map((v) => `"${String(v).replaceAll('"', '\\"')}"`).join(',')}}`);
  return `'${String(value).replaceAll("'", "''")}'`;
}

interface PlanJson {
  Plan: { 'Shared Hit Blocks'?: number; 'Shared Read Blocks'?: number };
  'Planning Time': number;
  'Execution Time': number;
}

const summarise = (plans: PlanJson[]) => ({
  planningMs: median(plans.map((p) => p['Planning Time'])),
  executionMs: median(plans.map((p) => p['Execution Time'])),
  sharedHit: plans[0]!.Plan['Shared Hit Blocks'] ?? 0,
  sharedRead: plans[0]!.Plan['Shared Read Blocks'] ?? 0,
});

export async function explain(db: Sql, statement: Compiled, runs = 5): Promise<ExplainResult> {
  return db.reserve().then(async (conn) => {
    try {
      const custom: PlanJson[] = [];
      for (let i = 0; i < runs; i++) {
        const [row] = await conn.unsafe(`EXPLAIN (ANALYZE, BUFFERS, TIMING OFF, FORMAT JSON) ${statement.text}`, statement.params as never[]);
        custom.push((row!['QUERY PLAN'] as PlanJson[])[0]!);
      }
      const args = statement.params.length > 0 ? `(${statement.params.map(literal).join(', ')})` : '';
      await conn.unsafe('DEALLOCATE ALL');
      await conn.unsafe(`PREPARE bench_statement AS ${statement.text}`);
      for (let i = 0; i < 6; i++) await conn.unsafe(`EXECUTE bench_statement${args}`);
      const prepared: PlanJson[] = [];
      for (let i = 0; i < runs; i++) {
        const [row] = await conn.unsafe(`EXPLAIN (ANALYZE, BUFFERS, TIMING OFF, FORMAT JSON) EXECUTE bench_statement${args}`);
        prepared.push((row!['QUERY PLAN'] as PlanJson[])[0]!);
      }
      const [generic] = await conn.unsafe(`select generic_plans > 0 as generic from pg_prepared_statements where name = 'bench_statement'`);
      const text = await conn.unsafe(`EXPLAIN (ANALYZE, BUFFERS, COSTS OFF, TIMING OFF) EXECUTE bench_statement${args}`);
      await conn.unsafe('DEALLOCATE bench_statement');
      return {
        name: statement.name,
        custom: summarise(custom),
        prepared: { ...summarise(prepared), generic: Boolean(generic?.generic) },
        plan: text.map((r) => r['QUERY PLAN'] as string).join('\n'),
      };
    } finally {
      conn.release();
    }
  });
}
