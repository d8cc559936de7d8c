import { parseArgs } from 'node:util';
import { eq } from 'drizzle-orm';
import { getDatabase } from '@/db/client';
import {
  contractCountQuery,
  contractPageQuery,
  organizationIdsOf,
  type ContractFilters,
} from '@/db/queries/contracts';
import { CONTRACT_STATUSES, users, type ContractStatus } from '@/db/schema';
import { SCALE_CALLERS } from '@/db/seed/scale';
import { runScript, UsageError } from './run-script';

// Prints EXPLAIN (ANALYZE, BUFFERS) of the exact list-page and count statements the API
// sends for a caller of the scale dataset (seed it first: npm run db:seed -- --contracts 100000).
// Usage: npm run db:explain -- [--caller heavy|typical] [--offset N] [--status S]
runScript(async () => {
  const { values } = parseArgs({
    options: {
      caller: { type: 'string', default: 'heavy' },
      offset: { type: 'string', default: '0' },
      status: { type: 'string' },
    },
  });
  const email = SCALE_CALLERS[values.caller as keyof typeof SCALE_CALLERS];
  if (!email) throw new UsageError('--caller must be heavy or typical');
  if (values.status && !CONTRACT_STATUSES.includes(values.status as ContractStatus)) {
    throw new UsageError(`--status must be one of ${CONTRACT_STATUSES.join(', ')}`);
  }
  const handle = await getDatabase();
  const { db } = handle;
  const [user] = await db.select({ id: users.id }).from(users).where(eq(users.email, email));
  if (!user) throw new UsageError(`${email} not found: run npm run db:seed -- --contracts 100000 first`);
  const scope = { userId: user.id, organizationIds: await organizationIdsOf(db, user.id) };
  const filters: ContractFilters = values.status ? { status: values.status as ContractStatus } : {};
  const [{ n: rows } = { n: 0 }] = await handle.query<{ n: number }>('select count(*)::int as n from contracts');
  console.log(`${rows} contracts in the table; caller ${email} is in ${scope.organizationIds.length} organisations\n`);

  const statements = {
    'list page (limit 50)': contractPageQuery(db, scope, filters, { limit: 50, offset: Number(values.offset) })?.toSQL(),
    count: contractCountQuery(db, scope, filters)?.toSQL(),
  };
  for (const [label, statement] of Object.entries(statements)) {
    if (!statement) continue;
    console.log(`== ${label}\n${statement.sql}\n`);
    const plan = await handle.query<{ 'QUERY PLAN': string }>(
      `EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) ${statement.sql}`,
      statement.params,
    );
    console.log(`${plan.map((r) => r['QUERY PLAN']).join('\n')}\n`);
  }
  await handle.close();
});

