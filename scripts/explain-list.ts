import { parseArgs } from 'node:util';
import { eq } from 'drizzle-orm';
import { contractCountStatement } from '@/db/queries/contracts/count';
import { contractPageStatement } from '@/db/queries/contracts/page';
import { users } from '@/db/schema';
import { SCALE_CALLERS } from '@/db/seed/scale';
import { loadScope } from '@/server/access/scope';
import { toContractFilters, toSort } from '@/server/contracts/query';
import { listContractsInput } from '@/server/contracts/schemas';
import { getDatabase } from '@/server/database';
import { StatementTexts } from './bench/statements';
import { runScript, UsageError } from './run-script';

// Prints EXPLAIN (ANALYZE, BUFFERS) of the exact list-page and count statements the API
// sends for a caller of the scale dataset (seed it first: npm run db:seed -- --contracts 200000).
// --query takes the list endpoint's own query string, validated as the API validates it.
// Usage: npm run db:explain -- [--caller heavy|typical] [--query 'expiring_within_days=90&sort=expiration_date'] [--today YYYY-MM-DD]
runScript(async () => {
  const { values } = parseArgs({
    options: {
      caller: { type: 'string', default: 'heavy' },
      query: { type: 'string', default: '' },
      today: { type: 'string' },
    },
  });
  const email = SCALE_CALLERS[values.caller as keyof typeof SCALE_CALLERS];
  if (!email) throw new UsageError('--caller must be heavy or typical');
  const parsed = listContractsInput.safeParse(Object.fromEntries(new URLSearchParams(values.query)));
  if (!parsed.success) throw new UsageError(`--query: ${parsed.error.issues.map((i) => i.message).join('; ')}`);
  const input = parsed.data;
  const handle = await getDatabase();
  const { db } = handle;
  const [user] = await db.select({ id: users.id }).from(users).where(eq(users.email, email));
  if (!user) throw new UsageError(`${email} not found: run npm run db:seed -- --contracts 100000 first`);
  const { scope } = await loadScope(db, user.id);
  const filters = toContractFilters(input, values.today);
  const [{ n: rows } = { n: 0 }] = await handle.query<{ n: number }>('select count(*)::int as n from contracts');
  console.log(`${rows} contracts in the table; caller ${email} is in ${scope.organizationIds.length} organisations; query: ${values.query || '(none)'}\n`);

  const texts = new StatementTexts(db);
  const statements = {
    [`list page (limit ${input.limit}, offset ${input.offset})`]: contractPageStatement(scope, filters, { limit: input.limit, offset: input.offset, sort: toSort(input.sort) }),
    count: contractCountStatement(scope, filters),
  };
  for (const [label, statement] of Object.entries(statements)) {
    if (!statement) continue;
    const { text, params } = texts.compile(statement);
    console.log(`== ${label}\n${text}\n`);
    const plan = await handle.query<{ 'QUERY PLAN': string }>(`EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) ${text}`, params);
    console.log(`${plan.map((r) => r['QUERY PLAN']).join('\n')}\n`);
  }
  await handle.close();
});
