/**
 * What a contract write costs, on two databases side by side in one run (to compare a
 * migration's before and after: the event list's capture, migration 0021). Each round
 * runs the same writes on each database in turn (every other round in reverse order): single-row updates of a contract's
 * title (one event each), and inserts of 50 contracts in one statement (50 events),
 * each in its own transaction, as the pipeline writes. Prints the median time per
 * transaction of each kind and database, and the ratios to the first database.
 *
 *   createdb -T cda_scale_200k cda_writes_before && createdb -T cda_scale_200k cda_writes_after
 *   DATABASE_URL=postgres:///cda_writes_after npm run db:migrate
 *   npm run bench:writes -- --databases postgres:///cda_writes_before,postgres:///cda_writes_after --rounds 7
 *
 * The writes change the databases: use copies.
 */
import postgres from 'postgres';

const args = process.argv.slice(2);
const arg = (name: string) => {
  const at = args.indexOf(`--${name}`);
  return at >= 0 ? args[at + 1] : undefined;
};
const urls = (arg('databases') ?? '').split(',').filter(Boolean);
const rounds = Number(arg('rounds') ?? 5);
if (urls.length < 1 || !Number.isInteger(rounds) || rounds < 1) {
  console.error('Usage: npm run bench:writes -- --databases URL[,URL...] [--rounds 5]');
  process.exit(2);
}

const UPDATES = 200;
const INSERTS = 20;
const BATCH = 50;

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

async function main() {
  const clients = urls.map((url) => postgres(url, { max: 1, onnotice: () => {} }));
  // The same owners and contracts on every database (copies of one seed).
  const [owner] = await clients[0]!<{ id: string }[]>`SELECT id FROM users WHERE email = 'heavy@scale.example.com'`;
  const ids = (await clients[0]!<{ id: string }[]>`SELECT id FROM contracts WHERE owner_id = ${owner!.id} AND organization_id IS NULL ORDER BY id LIMIT ${UPDATES}`).map((r) => r.id);
  if (ids.length < UPDATES) throw new Error(`the first database needs ${UPDATES} personal contracts of one user (the scale seed's heavy@scale.example.com: npm run db:seed -- --contracts 200000)`);
  const update: number[][] = urls.map(() => []);
  const insert: number[][] = urls.map(() => []);
  for (let round = 0; round < rounds; round++) {
    // Every other round in the reverse order: neither database always runs first.
    const order = round % 2 === 0 ? [...clients.entries()] : [...clients.entries()].reverse();
    for (const [d, sql] of order) {
      for (const [i, id] of ids.entries()) {
        const start = performance.now();
        await sql`UPDATE contracts SET title = ${`Bench ${round}.${i}`} WHERE id = ${id}`;
        update[d]!.push(performance.now() - start);
      }
      for (let i = 0; i < INSERTS; i++) {
        const rows = Array.from({ length: BATCH }, (_, r) => ({ owner_id: owner!.id, title: `Bench insert ${round}.${i}.${r}`, file_name: 'bench.pdf', file_size: 1 }));
        const start = performance.now();
        await sql`INSERT INTO contracts ${sql(rows)}`;
        insert[d]!.push(performance.now() - start);
      }
    }
  }
  console.log(`${rounds} rounds; median ms per transaction (one row updated; ${BATCH} rows inserted in one statement)\n`);
  console.log('| database | update 1 row | ratio | insert 50 rows | ratio |\n| --- | --- | --- | --- | --- |');
  for (const [d, url] of urls.entries()) {
    const u = median(update[d]!);
    const n = median(insert[d]!);
    console.log(`| ${new URL(url).pathname.slice(1) || url} | ${u.toFixed(3)} | ${(u / median(update[0]!)).toFixed(3)} | ${n.toFixed(2)} | ${(n / median(insert[0]!)).toFixed(3)} |`);
  }
  await Promise.all(clients.map((c) => c.end()));
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
