/**
 * npm run bench:events: what a page of the event list costs with many events retained,
 * for the scale dataset's heavy and typical callers, from several places in the list.
 *
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/cda_scale_2m npm run db:migrate
 *   npm run bench:events -- --database postgres://postgres@127.0.0.1:5432/cda_scale_2m [--events 1000000] [--samples 200]
 *
 * It first tops the list up to --events events (contract.updated events of contracts drawn
 * at random from every tenant, so a caller's share of the events is its share of the
 * contracts; in transactions of 100,000, numbered at commit as the app's writes are), then
 * for each caller and each starting place (no cursor; the caller's own events at 25, 50,
 * 75 and 99 % of the list) sends --samples requests GET /api/v1/events?limit=100&cursor=…
 * one after another through the app's REST handler in this process (the key check, its
 * scope, the rate limit in memory, the statements, the JSON: everything but the HTTP
 * hop, which the list's figures in docs/benchmarks.md put at about 1 ms), and prints the
 * median and 95th percentile. The events it adds stay (they are retained as any other).
 */
import { parseArgs } from 'node:util';

const { values: opts } = parseArgs({
  options: { database: { type: 'string' }, events: { type: 'string', default: '1000000' }, samples: { type: 'string', default: '200' } },
  strict: true,
});
if (!opts.database) {
  console.error('Usage: npm run bench:events -- --database URL [--events 1000000] [--samples 200]');
  process.exit(2);
}
process.env.DATABASE_URL = opts.database;
process.env.RATE_LIMIT_GENERAL_PER_WINDOW = '100000000';
delete process.env.REDIS_URL;
const wanted = Number(opts.events);
const samples = Number(opts.samples);
const BATCH = 100_000;

const percentile = (values: number[], p: number) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(values.length * p))]!;

async function main() {
  const { openPostgres, executeRows, runStatement } = await import('@/db/client');
  const { accessPathValues, accessShape, accessShapeName, eventListPaths } = await import('@/db/queries/access');
  const { webhookEvents } = await import('@/db/schema');
  const { loadTokenScope } = await import('@/server/access/scope');
  const { revokeToken } = await import('@/server/access/tokens');
  const { sql } = await import('drizzle-orm');
  const { setProcessDatabase } = await import('@/server/database');
  const { handleApiRequest } = await import('@/server/rest/router');
  const { createToken } = await import('@/server/access/tokens');
  const { encodeEventCursor } = await import('@/server/events/service');
  const { SCALE_CALLERS } = await import('@/db/seed/scale');
  const handle = await openPostgres(opts.database!, { max: 4 });
  setProcessDatabase(handle);
  const db = handle.db;

  const count = async () => Number((await executeRows<{ n: string }>(db, sql`SELECT count(*) AS n FROM webhook_events WHERE position IS NOT NULL`))[0]!.n);
  let have = await count();
  const [{ n: contractCount } = { n: '0' }] = await executeRows<{ n: string }>(db, sql`SELECT count(*) AS n FROM contracts`);
  while (have < wanted) {
    const batch = Math.min(BATCH, wanted - have);
    const started = performance.now();
    // A random sample of every tenant's contracts; marked fanned out (no worker runs here).
    await db.transaction(async (tx) => {
      await tx.execute(sql`
        INSERT INTO webhook_events (type, contract_id, owner_id, organization_id, contract, extra, occurred_at, fanned_out_at)
        SELECT 'contract.updated', c.id, c.owner_id, c.organization_id, to_jsonb(c), '{"changed_fields":["title"]}'::jsonb, now(), now()
        FROM contracts c TABLESAMPLE BERNOULLI (${Math.min(100, (batch / Number(contractCount)) * 100 * 1.05)}) LIMIT ${batch}`);
    });
    have = await count();
    console.error(`events: ${have.toLocaleString('en')} of ${wanted.toLocaleString('en')} (${Math.round(performance.now() - started)} ms for this batch)`);
  }
  await db.execute(sql`ANALYZE webhook_events`);

  console.log(`${have.toLocaleString('en')} events retained, ${Number(contractCount).toLocaleString('en')} contracts; ${samples} requests per cell, limit 100, one at a time`);
  console.log('caller   | from                   | events of the caller | median ms | p95 ms | events on the page');
  for (const caller of ['heavy', 'typical'] as const) {
    const [user] = await executeRows<{ id: string }>(db, sql`SELECT id FROM users WHERE email = ${SCALE_CALLERS[caller]}`);
    if (!user) throw new Error(`no ${SCALE_CALLERS[caller]}: seed the scale data first (npm run db:seed -- --contracts 2000000)`);
    const { secret, token } = await createToken(db, 'api_key', user.id, { name: `bench events ${caller}`, expiresInDays: 1 });
    // The caller's events' positions (by the list's own paths, db/queries/access.ts), to
    // start from places inside its own stretch of the list.
    const { scope } = (await loadTokenScope(db, token.id))!;
    const shape = accessShape(scope, undefined);
    const mine = await runStatement<{ position: number }[]>(db, {
      // Named by its shape: statements are prepared once per name.
      name: `bench.events.positions ${shape ? accessShapeName(shape) : 'nothing'}`,
      build: (d) =>
        d
          .select({ position: sql<number>`${webhookEvents.position}` })
          .from(webhookEvents)
          .where(sql`${webhookEvents.position} IS NOT NULL AND (${sql.join(eventListPaths(shape, webhookEvents, false), sql` OR `)})`)
          .orderBy(webhookEvents.position),
      values: shape ? accessPathValues(scope, shape) : {},
      prepareOnServer: false,
    });
    const starts: [string, number | undefined][] = [['the oldest (no cursor)', undefined], ...[0.25, 0.5, 0.75, 0.99].map((q) => [`its events at ${q * 100} %`, Number(mine[Math.floor(mine.length * q)]?.position ?? 0)] as [string, number])];
    for (const [label, position] of starts) {
      const url = `http://bench.local/api/v1/events?limit=100${position === undefined ? '' : `&cursor=${encodeEventCursor(position)}`}`;
      const times: number[] = [];
      let size = 0;
      for (let i = 0; i < samples + 10; i++) {
        const started = performance.now();
        const res = await handleApiRequest(new Request(url, { headers: { 'X-API-Key': secret } }));
        const body = (await res.json()) as { data: { events: unknown[] } };
        if (res.status !== 200) throw new Error(`${res.status}: ${JSON.stringify(body)}`);
        // The first ten warm the statements and caches up.
        if (i >= 10) times.push(performance.now() - started);
        size = body.data.events.length;
      }
      console.log(`${caller.padEnd(8)} | ${label.padEnd(22)} | ${String(mine.length).padStart(20)} | ${percentile(times, 0.5).toFixed(2).padStart(9)} | ${percentile(times, 0.95).toFixed(2).padStart(6)} | ${size}`);
    }
    await revokeToken(db, 'api_key', user.id, token.id);
  }
  await handle.close();
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
