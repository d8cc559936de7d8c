import { spawn } from 'node:child_process';
import postgres from 'postgres';
import { SCALE_CALLERS } from '@/db/seed/scale';

/**
 * The benchmark's database: created on the machine's Postgres, migrated, seeded with the
 * scale dataset (reused when it is already there with the same size), plus two export
 * callers whose memberships add up to the export sizes, and fresh API keys.
 */

export type Sql = postgres.Sql;

export function databaseUrl(adminUrl: string, name: string): string {
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

/** Runs an npm script's entry with tsx, returns stdout; fails with its stderr. */
export function runTsx(script: string, args: string[], env: Record<string, string>): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--conditions=react-server', '--import', 'tsx', script, ...args], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('close', (code) => (code === 0 ? resolve(out) : reject(new Error(`${script} ${args.join(' ')} failed (${code}): ${err || out}`))));
  });
}

export async function prepareDatabase(options: {
  adminUrl: string;
  name: string;
  contracts: number;
  reseed: boolean;
  log: (line: string) => void;
}): Promise<string> {
  const { adminUrl, name, contracts, log } = options;
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`bad database name ${name}`);
  const url = databaseUrl(adminUrl, name);
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  try {
    const [exists] = await admin`select 1 as ok from pg_database where datname = ${name}`;
    let fresh = !exists || options.reseed;
    if (exists && !fresh) {
      const db = postgres(url, { max: 1, onnotice: () => {} });
      try {
        const [row] = await db`
          select (select count(*)::int from contracts) as contracts,
                 (select count(*)::int from users where email = ${SCALE_CALLERS.heavy}) as heavy`;
        // The scale seed adds exactly `contracts` rows to the demo's few dozen.
        fresh = !row || row.heavy !== 1 || row.contracts < contracts || row.contracts > contracts + 1000;
        if (fresh) log(`database ${name} holds ${row?.contracts} contracts, not ${contracts}: recreating it`);
      } catch {
        fresh = true;
      } finally {
        await db.end();
      }
    }
    if (fresh) {
      await admin.unsafe(`drop database if exists ${name} with (force)`);
      await admin.unsafe(`create database ${name}`);
    }
    const env = { DATABASE_URL: url };
    const started = Date.now();
    await runTsx('scripts/db-migrate.ts', [], env);
    if (fresh) {
      log(`seeding ${contracts} contracts into ${name}...`);
      await runTsx('scripts/db-seed.ts', ['--contracts', String(contracts)], env);
      log(`seeded in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    }
  } finally {
    await admin.end();
  }
  return url;
}

export const EXPORT_CALLERS = { export_small: 'export-small@bench.example.com', export_large: 'export-large@bench.example.com' };

/**
 * The subset of organisations whose contract counts add up closest to `target`
 * (dynamic programming over the sums), so that an export caller sees about that many.
 */
function closestSubset(sizes: { id: string; n: number }[], target: number): string[] {
  const limit = target + Math.max(...sizes.map((s) => s.n));
  const from = new Int32Array(limit + 1).fill(-2); // -2 unreachable, -1 start, else item index
  const prev = new Int32Array(limit + 1).fill(-1);
  from[0] = -1;
  sizes.forEach((size, index) => {
    for (let sum = limit; sum >= size.n; sum--) {
      if (from[sum] === -2 && from[sum - size.n] !== -2) {
        from[sum] = index;
        prev[sum] = sum - size.n;
      }
    }
  });
  let best = 0;
  for (let sum = 0; sum <= limit; sum++) {
    if (from[sum] !== -2 && Math.abs(sum - target) < Math.abs(best - target)) best = sum;
  }
  const ids: string[] = [];
  for (let sum = best; sum > 0; sum = prev[sum]!) ids.push(sizes[from[sum]!]!.id);
  return ids;
}

/** Two callers who see about `small` and `large` contracts through organisation memberships. */
export async function prepareExportCallers(db: Sql, small: number, large: number) {
  const sizes = (await db`
    select organization_id as id, count(*)::int as n from contracts
    where organization_id is not null group by organization_id order by n desc, organization_id`) as unknown as { id: string; n: number }[];
  const result: Record<keyof typeof EXPORT_CALLERS, number> = { export_small: 0, export_large: 0 };
  for (const [key, email] of Object.entries(EXPORT_CALLERS) as [keyof typeof EXPORT_CALLERS, string][]) {
    const orgs = closestSubset(sizes, key === 'export_small' ? small : large);
    await db.begin(async (tx) => {
      const [user] = await tx`
        insert into users (email, name) values (${email}, 'Benchmark export caller')
        on conflict (email) do update set name = excluded.name returning id`;
      await tx`delete from memberships where user_id = ${user!.id}`;
      for (const org of orgs) await tx`insert into memberships (user_id, organization_id) values (${user!.id}, ${org})`;
    });
    result[key] = orgs.reduce((sum, id) => sum + sizes.find((s) => s.id === id)!.n, 0);
  }
  await db`vacuum analyze memberships`;
  return result;
}

/** The header the bench's app reads the client address from (CLIENT_ADDRESS_HEADER): allowed addresses apply. */
export const BENCH_CLIENT_ADDRESS_HEADER = 'x-bench-client-address';

/** A fresh key per caller, and per restricted caller with its `apikey create` options (older benchmark keys of these callers are deleted first). */
export async function mintKeys(
  db: Sql,
  url: string,
  emails: Record<string, string>,
  restricted: Record<string, { email: string; restrictions: string[] }> = {},
): Promise<Record<string, string>> {
  await db`delete from access_tokens where kind = 'api_key' and name = 'bench' and user_id in (select id from users where email in ${db(Object.values(emails))})`;
  const wanted = [
    ...Object.entries(emails).map(([caller, email]) => [caller, email, []] as const),
    ...Object.entries(restricted).map(([caller, { email, restrictions }]) => [caller, email, restrictions] as const),
  ];
  const entries = await Promise.all(
    wanted.map(async ([caller, email, restrictions]) => {
      const out = await runTsx('scripts/apikey.ts', ['create', '--email', email, '--name', 'bench', '--expires-in-days', '1', ...restrictions], {
        DATABASE_URL: url,
        CLIENT_ADDRESS_HEADER: BENCH_CLIENT_ADDRESS_HEADER,
      });
      return [caller, out.trim().split('\n').at(-1)!.trim()] as const;
    }),
  );
  return Object.fromEntries(entries);
}
