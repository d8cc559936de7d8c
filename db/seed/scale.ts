import bcrypt from 'bcrypt';
import { PASSWORD_HASH_COST } from '@/lib/passwords';
import { sql, type SQL } from 'drizzle-orm';
import { executeRows, type Database } from '../client';
import { DEMO_PASSWORD } from './demo';

/**
 * A large deterministic dataset for benchmarks, built inside the database with
 * generate_series (one INSERT ... SELECT per segment), so 200,000 contracts take
 * seconds rather than minutes.
 *
 * Shape at N = 200,000: about 1,000 users and 50 organisations, plus two named callers:
 * - heavy@scale.example.com sees about 50,000 contracts (10,000 personal and five
 *   organisations of 8,000);
 * - typical@scale.example.com sees about 300 (200 personal and one organisation of 100).
 */
export const SCALE_CALLERS = {
  heavy: 'heavy@scale.example.com',
  typical: 'typical@scale.example.com',
} as const;

export interface ScalePlan {
  contracts: number;
  users: number;
  organizations: number;
  heavyPersonal: number;
  heavyOrgSize: number;
  heavyOrgs: number;
  typicalPersonal: number;
  typicalOrgSize: number;
}

export function scalePlan(contracts: number): ScalePlan {
  const part = (share: number) => Math.max(1, Math.round(contracts * share));
  return {
    contracts,
    users: Math.max(10, Math.round(contracts / 200)),
    organizations: Math.max(10, Math.round(contracts / 4000)),
    heavyPersonal: part(0.05),
    heavyOrgSize: part(0.04),
    heavyOrgs: 5,
    typicalPersonal: part(0.001),
    typicalOrgSize: part(0.0005),
  };
}

// A version-4-shaped UUID from md5(name): deterministic, and valid for strict validators.
const uuidOf = (name: SQL) =>
  sql`overlay(overlay(md5(${name}) placing '4' from 13) placing '8' from 17)::uuid`;

const userId = (n: SQL) => uuidOf(sql`'scale-user:' || (${n})::text`);
const orgId = (n: SQL) => uuidOf(sql`'scale-org:' || (${n})::text`);

/** Inserts contracts numbered [from, from + count) owned as the two expressions say. */
function insertContracts(from: number, count: number, owner: SQL, organization: SQL): SQL {
  return sql`
    INSERT INTO contracts (id, owner_id, organization_id, title, status, file_name, file_size,
      created_at, updated_at, expiration_date, renewal_date, auto_renewal, notice_period, renewal_term, contract_value,
      currency, provider, client, summary, confidence_score)
    SELECT
      ${uuidOf(sql`'scale-contract:' || i`)},
      ${owner}, ${organization},
      (ARRAY['Software Subscription','Office Lease','Supplier Agreement','Consulting Services',
             'Maintenance Contract','Insurance Policy','Logistics Agreement','Marketing Retainer'])[1 + i % 8]
        || ' #' || i,
      s.status::contract_status,
      'contract-' || i || '.pdf',
      (10000 + (i::bigint * 7919) % 5000000)::int,
      -- Two contracts share each created_at, so the id tie-break matters.
      timestamptz '2026-10-01 00:00:00+00' - ((i / 2) * interval '41 seconds'),
      timestamptz '2026-10-01 01:00:00+00' - ((i / 2) * interval '41 seconds'),
      CASE WHEN c THEN date '2026-11-01' + ((i::bigint * 13) % 1500)::int END,
      -- A quarter of the renewal dates lie one to six years back: contracts that have renewed
      -- since, which the next renewal rolls forward (the auto-renewing ones with a term).
      CASE WHEN c AND i % 7 <> 0 THEN date '2026-11-01' + ((i::bigint * 13) % 1500)::int - 30 - CASE WHEN i % 4 = 1 THEN 365 * (1 + (i / 4) % 6) ELSE 0 END END,
      CASE WHEN c AND i % 11 <> 0 THEN i % 3 <> 0 END,
      -- Most auto-renewing contracts state a notice period and a term (mostly a year).
      CASE WHEN c AND i % 4 <> 0 THEN (ARRAY['P30D','P60D','P90D','P3M','P6M'])[1 + i % 5] END,
      CASE WHEN c AND i % 5 <> 0 THEN (ARRAY['P1Y','P1Y','P1Y','P1Y','P1Y','P1Y','P1M','P2Y','P3Y'])[1 + i % 9] END,
      CASE WHEN c AND i % 13 <> 0 THEN ((i::bigint * 7919) % 10000000) / 100.0 END,
      CASE WHEN c AND i % 13 <> 0 THEN (ARRAY['USD','EUR','GBP','JPY','CHF'])[1 + i % 5] END,
      CASE WHEN c THEN (ARRAY['Northwind Traders','Contoso Ltd','Initech','Umbrella plc','Stark Industries',
             'Wayne Enterprises'])[1 + i % 6] END,
      CASE WHEN c THEN (ARRAY['Acme Corp','Globex','Hooli','Vandelay Industries'])[1 + i % 4] END,
      CASE WHEN c AND i % 5 <> 0 THEN 'Agreement number ' || i || ' covering services, fees and termination terms.' END,
      CASE WHEN c THEN ((i::bigint * 31) % 101) / 100.0 END
    FROM generate_series(${from}::int, ${from + count - 1}::int) AS i,
      LATERAL (SELECT (ARRAY['completed','completed','completed','pending','processing','failed'])[1 + i % 6] AS status) s,
      LATERAL (SELECT s.status = 'completed' AS c) done
    ON CONFLICT (id) DO NOTHING`;
}

/** Rows a single INSERT writes: small enough that progress moves every second or two. */
const CHUNK_ROWS = 100_000;

export interface SeedScaleOptions {
  /** Receives one line of progress at each step and every `progressEveryMs` during one. */
  onProgress?: (line: string) => void;
  /** Default 5 s: a long seed says it is alive at least every 10 s. */
  progressEveryMs?: number;
  /** Rows per INSERT (default 100,000; tests pass fewer to cross chunk boundaries). */
  chunkRows?: number;
}

/** A step that failed: its message names the step, the database's error is its cause. */
export class SeedStepError extends Error {
  constructor(
    readonly step: string,
    cause: unknown,
  ) {
    super(`the scale seed failed at step "${step}": ${innermostMessage(cause)}`, { cause });
  }
}

// The database's own words: Drizzle wraps them in "Failed query: <the whole statement>".
function innermostMessage(error: unknown): string {
  let inner = error;
  while (inner instanceof Error && inner.cause instanceof Error) inner = inner.cause;
  return inner instanceof Error ? inner.message : String(inner);
}

/**
 * Seeds the scale dataset. Give it a handle of ONE connection (the seed script opens one):
 * every step first sets `statement_timeout = 0` for that session or transaction, so neither
 * the bulk load, the index builds nor VACUUM ANALYZE runs under the API's request timeout
 * (DATABASE_STATEMENT_TIMEOUT_MS, or a role's setting behind a pooler).
 *
 * What a failure leaves: users, organisations and memberships are one transaction; the
 * contracts, with the secondary indexes dropped and rebuilt, are another (a failure rolls
 * all of it back, indexes included); maintenance comes after. Every insert skips rows that
 * exist, and a rerun whose last contract is present skips the load and goes straight to
 * the maintenance, so a rerun always finishes what a failed run left.
 */
export async function seedScale(db: Database, contracts: number, options: SeedScaleOptions = {}): Promise<ScalePlan> {
  const plan = scalePlan(contracts);
  const started = Date.now();
  const say = options.onProgress ?? (() => {});
  let step = 'starting';
  let written = 0;
  const elapsed = () => `${((Date.now() - started) / 1000).toFixed(1)} s`;
  const status = () => `[${elapsed()}] ${step}; contracts written: ${written.toLocaleString('en')} of ${plan.contracts.toLocaleString('en')}`;
  const heartbeat = setInterval(() => say(status()), options.progressEveryMs ?? 5_000);
  heartbeat.unref?.();
  const run = async <T>(name: string, work: () => Promise<T>): Promise<T> => {
    step = name;
    say(status());
    try {
      return await work();
    } catch (error) {
      // The innermost step names the failure (`step` is the last one begun: the commit of
      // the load is its own).
      throw error instanceof SeedStepError ? error : new SeedStepError(step, error);
    }
  };
  try {
    await run('lifting the statement timeout for this session', () => db.execute(sql`SET statement_timeout = 0`));
    await loadScale(db, plan, run, (rows) => (written += rows), options.chunkRows ?? CHUNK_ROWS);
    // Fresh statistics and a visibility map, so plans and index-only counts are realistic.
    // VACUUM cannot run in a transaction: the session's own timeout is lifted just before.
    for (const table of ['contracts', 'memberships', 'contract_counts', 'contract_date_counts', 'contract_updated_counts']) {
      await run(`VACUUM ANALYZE ${table}`, async () => {
        await db.execute(sql`SET statement_timeout = 0`);
        await db.execute(sql.raw(`VACUUM ANALYZE ${table}`));
      });
    }
    step = 'done';
    say(`[${elapsed()}] done`);
    return plan;
  } finally {
    clearInterval(heartbeat);
  }
}

type Step = <T>(name: string, work: () => Promise<T>) => Promise<T>;

async function loadScale(db: Database, plan: ScalePlan, run: Step, wrote: (rows: number) => void, chunkRows: number): Promise<void> {
  const passwordHash = await bcrypt.hash(DEMO_PASSWORD, PASSWORD_HASH_COST);
  const firstSharedOrg = plan.heavyOrgs + 2; // orgs 1..5 heavy, 6 typical, 7.. shared
  const sharedOrgs = Math.max(1, plan.organizations - firstSharedOrg + 1);

  await run('users, organisations and memberships', () =>
    db.transaction(async (tx) => {
      // A bulk load, not a request: the API's statement timeout does not apply.
      await tx.execute(sql`SET LOCAL statement_timeout = 0`);
      await tx.execute(sql`
        INSERT INTO users (id, email, name, password_hash, created_at)
        SELECT ${userId(sql`j`)}, 'user' || j || '@scale.example.com', 'Scale User ' || j, ${passwordHash},
               timestamptz '2026-01-01 00:00:00+00'
        FROM generate_series(1, ${plan.users}::int) AS j
        UNION ALL SELECT ${userId(sql`'heavy'`)}, ${SCALE_CALLERS.heavy}, 'Heavy Caller', ${passwordHash}, timestamptz '2026-01-01 00:00:00+00'
        UNION ALL SELECT ${userId(sql`'typical'`)}, ${SCALE_CALLERS.typical}, 'Typical Caller', ${passwordHash}, timestamptz '2026-01-01 00:00:00+00'
        ON CONFLICT DO NOTHING`);
      await tx.execute(sql`
        INSERT INTO organizations (id, name, created_at)
        SELECT ${orgId(sql`k`)}, 'Scale Organisation ' || k, timestamptz '2026-01-01 00:00:00+00'
        FROM generate_series(1, ${plan.organizations}::int) AS k
        ON CONFLICT DO NOTHING`);
      await tx.execute(sql`
        INSERT INTO memberships (user_id, organization_id, role)
        SELECT ${userId(sql`'heavy'`)}, ${orgId(sql`k`)}, 'member'::membership_role FROM generate_series(1, ${plan.heavyOrgs}::int) AS k
        UNION ALL SELECT ${userId(sql`'typical'`)}, ${orgId(sql`${plan.heavyOrgs + 1}`)}, 'member'
        -- every regular user is in two of the shared organisations
        UNION ALL SELECT ${userId(sql`j`)}, ${orgId(sql`${firstSharedOrg} + j % ${sharedOrgs}`)}, 'member'
          FROM generate_series(1, ${plan.users}::int) AS j
        UNION ALL SELECT ${userId(sql`j`)}, ${orgId(sql`${firstSharedOrg} + (j * 7 + 3) % ${sharedOrgs}`)}, 'member'
          FROM generate_series(1, ${plan.users}::int) AS j
        ON CONFLICT DO NOTHING`);
      }),
  );

  // The load commits as one transaction: its last contract present means all of it is.
  const [last] = await run('contracts: looking for an earlier complete load', () =>
    executeRows<{ present: boolean }>(
      db,
      sql`SELECT EXISTS (SELECT 1 FROM contracts WHERE id = ${uuidOf(sql`'scale-contract:' || ${plan.contracts}::int`)}) AS present`,
    ),
  );
  if (last?.present) {
    wrote(plan.contracts);
    await run('contracts already loaded by an earlier run: on to the maintenance', async () => {});
    return;
  }

  await run('contracts: dropping the secondary indexes (one transaction with the load and the index builds)', () =>
    db.transaction(async (tx) => {
      await tx.execute(sql`SET LOCAL statement_timeout = 0`);
      // A bulk load builds the secondary indexes once at the end (a sort each) instead of
      // updating a dozen B-trees and a trigram index row by row: at 2,000,000 contracts that
      // is several times faster. The primary key stays (ON CONFLICT needs it). The statements
      // come from the catalogue, so they are always the migrations' own.
      await tx.execute(sql`SET LOCAL maintenance_work_mem = '256MB'`);
      const indexRows = await executeRows<{ name: string; definition: string }>(tx as unknown as Database, sql`
        SELECT c.relname AS name, pg_get_indexdef(i.indexrelid) AS definition
        FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
        WHERE i.indrelid = 'contracts'::regclass AND NOT i.indisprimary AND NOT i.indisunique
        ORDER BY c.relname`);
      for (const { name } of indexRows) await tx.execute(sql`DROP INDEX ${sql.identifier(name)}`);

      let next = 1;
      const segment = async (count: number, owner: SQL, organization: SQL) => {
        // In chunks, so that the progress moves; the numbering (and so every row) is the same.
        for (let done = 0; done < count; done += chunkRows) {
          const rows = Math.min(chunkRows, count - done);
          await run(`contracts: inserting rows ${next + done} to ${next + done + rows - 1}`, () =>
            tx.execute(insertContracts(next + done, rows, owner, organization)),
          );
          wrote(rows);
        }
        next += Math.max(0, count);
      };
      await segment(plan.heavyPersonal, userId(sql`'heavy'`), sql`NULL::uuid`);
      for (let k = 1; k <= plan.heavyOrgs; k++) {
        await segment(plan.heavyOrgSize, userId(sql`'heavy'`), orgId(sql`${k}`));
      }
      await segment(plan.typicalPersonal, userId(sql`'typical'`), sql`NULL::uuid`);
      await segment(plan.typicalOrgSize, userId(sql`'typical'`), orgId(sql`${plan.heavyOrgs + 1}`));
      const rest = plan.contracts - (next - 1);
      const personal = Math.floor(rest / 2);
      // The rest: half personal contracts spread over the regular users, half spread over
      // the shared organisations.
      await segment(personal, userId(sql`1 + i % ${plan.users}`), sql`NULL::uuid`);
      await segment(rest - personal, userId(sql`1 + i % ${plan.users}`), orgId(sql`${firstSharedOrg} + i % ${sharedOrgs}`));
      // The evergreen contracts rolled forward as the scheduled job would (as of today, as
      // it does from ten minutes past midnight: server/contracts/rolling.ts), before the
      // indexes exist: the data is then what a deployment whose job runs holds, not a table
      // read by the rule until it catches up.
      await run('contracts: rolling evergreen renewals forward (as the scheduled job does)', () =>
        tx.execute(sql`
          UPDATE contracts SET next_renewal_date = (now() AT TIME ZONE 'UTC')::date
          WHERE status = 'completed' AND auto_renewal AND renewal_term IS NOT NULL AND next_renewal_date < (now() AT TIME ZONE 'UTC')::date`),
      );
      // The table's parallel_workers (0 since migration 0016, for its queries) also decides
      // CREATE INDEX's: the builds get Postgres's own choice back, and the table its
      // parameters after them, in this transaction.
      // A step of its own: under the last insert's name, the progress said rows were being
      // inserted that were all written (and a failure here would have been named so).
      const parallelWorkers = await run('contracts: parallel workers for the index builds', async () => {
        const [table] = await executeRows<{ options: string[] | null }>(tx as unknown as Database, sql`
          SELECT reloptions AS options FROM pg_class WHERE oid = 'contracts'::regclass`);
        const found = (table?.options ?? []).find((option) => option.startsWith('parallel_workers='));
        if (found) await tx.execute(sql`ALTER TABLE contracts RESET (parallel_workers)`);
        return found;
      });
      for (const [n, { name, definition }] of indexRows.entries()) {
        await run(`contracts: building index ${n + 1} of ${indexRows.length} (${name})`, () => tx.execute(sql.raw(definition)));
      }
      if (parallelWorkers) {
        const workers = Number(parallelWorkers.slice('parallel_workers='.length));
        await tx.execute(sql`ALTER TABLE contracts SET (parallel_workers = ${sql.raw(String(workers))})`);
      }
      // Names the commit as the step under way (a failure there is reported as such).
      await run('contracts: committing', async () => {});
      }),
  );
}
