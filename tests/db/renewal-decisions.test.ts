import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '@/db/client';
import { countContracts } from '@/db/queries/contracts/count';
import type { ContractFilters } from '@/db/queries/contracts/filters';
import { selectContractPage, selectPlannedPage } from '@/db/queries/contracts/page';
import { planContractList, planWithFigures } from '@/db/queries/contracts/planning';
import { contracts, memberships, organizations, users, type NewContract } from '@/db/schema';
import type { SortField } from '@/lib/contracts';
import { renewalDecision } from '@/lib/renewal-dates';
import { rollRenewalDates } from '@/db/queries/contracts/rolling';
import { rollingDay, rollRenewals } from '@/server/contracts/rolling';
import { addDays } from '@/server/dates';
import { readingFigures, walkByCursor, walkingFigures } from '../helpers/contract-pages';
import { createTestDatabase } from '../helpers/db';
import { naiveMatches, naiveOrder } from '../helpers/naive-contracts';

/**
 * The renewal decisions in the database (migration 0019): the SQL functions give the rule
 * of lib/renewal-dates.ts; the stored next renewal and notice deadline follow every write;
 * and the list's filters (renewing_*, notice_*), sorts (next_renewal_date, notice_deadline),
 * cursors and totals answer as the rule does on any day, whether the scheduled job rolled
 * the evergreen contracts forward that day or not (db/queries/contracts/expressions.ts,
 * isStale). The contracts cover month ends, leap days, P1M terms, missing fields and
 * renewal dates years in the past.
 */

let handle: DatabaseHandle;
const USER = '00000000-0000-4000-8000-0000000f0001';
const ORGS = ['00000000-0000-4000-8000-0000000f00a1', '00000000-0000-4000-8000-0000000f00a2'] as const;
const scope = { userId: USER, organizationIds: [...ORGS] };
const rows: NewContract[] = [];

const TERMS = ['P1M', 'P1Y', 'P1Y', 'P2Y', 'P3Y', 'P3M', 'P6W', 'P1M15D', null];
const NOTICES = ['P30D', 'P60D', 'P90D', 'P3M', 'P6M', 'P8W', null];
const DAYS = ['01', '15', '28', '29', '30', '31'];

/** A small deterministic generator (mulberry32: the same rows on every run). */
function generator(seed: number) {
  let state = seed >>> 0;
  return (n: number) => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (((t ^ (t >>> 14)) >>> 0) / 4294967296 * n) | 0;
  };
}

/** A valid date of `year`-`month` on `day`, or that month's last day (30 February is 28 or 29 February). */
function dateOf(year: number, month: number, day: string): string {
  const last = new Date(Date.UTC(year, month, 0)).getUTCDate();
  return `${year}-${String(month).padStart(2, '0')}-${String(Math.min(Number(day), last)).padStart(2, '0')}`;
}

function row(i: number, pick: (n: number) => number): NewContract {
  const path = pick(3);
  const renewal = pick(12) === 0 ? null : dateOf(2016 + pick(13), 1 + pick(12), DAYS[pick(DAYS.length)]!);
  const auto = [true, true, true, false, null][pick(5)]!;
  return {
    id: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
    ownerId: USER,
    organizationId: path === 0 ? null : ORGS[path - 1]!,
    title: `Contract ${i}`,
    status: pick(8) === 0 ? 'processing' : 'completed',
    fileName: 'f.pdf',
    fileSize: 1,
    createdAt: new Date(Date.UTC(2026, 0, 1, 0, i)),
    updatedAt: new Date(Date.UTC(2026, 0, 1, 0, i)),
    expirationDate: renewal === null ? null : addDays(renewal, 30 + pick(60)),
    renewalDate: renewal,
    autoRenewal: auto,
    renewalTerm: TERMS[pick(TERMS.length)]!,
    noticePeriod: NOTICES[pick(NOTICES.length)]!,
  };
}

const today = () => new Date().toISOString().slice(0, 10);

beforeAll(async () => {
  handle = await createTestDatabase();
  await handle.db.insert(users).values({ id: USER, email: 'renewal-decisions@example.com' });
  await handle.db.insert(organizations).values(ORGS.map((id, i) => ({ id, name: `Renewals ${i}` })));
  await handle.db.insert(memberships).values(ORGS.map((organizationId) => ({ userId: USER, organizationId })));
  const pick = generator(34);
  for (let i = 1; i <= 600; i++) rows.push(row(i, pick));
  await handle.db.insert(contracts).values(rows);
  await handle.query('ANALYZE contracts');
}, 60_000);
afterAll(async () => handle?.close());

const decisionOf = (r: NewContract, day: string) =>
  renewalDecision({ renewalDate: r.renewalDate ?? null, autoRenewal: r.autoRenewal ?? null, renewalTerm: r.renewalTerm ?? null, noticePeriod: r.noticePeriod ?? null }, day);

/** The windows and sorts a renewal manager asks for, as of `day`. */
function cases(day: string): { filters: ContractFilters; sort: SortField; descending: boolean }[] {
  const on = (f: ContractFilters) => ({ ...f, today: day });
  return [
    { filters: on({ renewalFrom: day, renewalTo: addDays(day, 90) }), sort: 'next_renewal_date', descending: false },
    { filters: on({ renewalFrom: day, renewalTo: addDays(day, 365) }), sort: 'created_at', descending: true },
    { filters: on({ noticeFrom: day, noticeTo: addDays(day, 60) }), sort: 'notice_deadline', descending: false },
    { filters: on({ noticeFrom: day, noticeTo: addDays(day, 120) }), sort: 'expiration_date', descending: false },
    // Passed deadlines (notice_before today): renewals that can no longer be stopped.
    { filters: on({ noticeTo: addDays(day, -1), renewalFrom: day }), sort: 'notice_deadline', descending: true },
    { filters: on({ renewalTo: addDays(day, 200), autoRenewal: true }), sort: 'next_renewal_date', descending: true },
    { filters: on({ renewalFrom: day, renewalTo: addDays(day, 90), organizationId: ORGS[0] }), sort: 'renewal_date', descending: false },
    { filters: on({}), sort: 'next_renewal_date', descending: false },
    { filters: on({}), sort: 'notice_deadline', descending: true },
    { filters: on({ status: 'completed', renewalFrom: day, renewalTo: addDays(day, 3650) }), sort: 'title', descending: false },
  ];
}

/** Every way the list reads the case (chosen, every path walked, every path reading its range), by offset and by cursor, and its total: the naive answer. */
async function expectRuleAnswers(day: string) {
  for (const { filters, sort: field, descending } of cases(day)) {
    const sort = { field, descending };
    const want = naiveOrder(rows, filters, field, descending);
    const label = `${JSON.stringify(filters)} sort ${descending ? '-' : ''}${field}`;
    expect((await selectContractPage(handle.db, scope, filters, { limit: 1000, sort })).map((r) => r.id), label).toEqual(want);
    for (const figures of [walkingFigures(scope, filters), readingFigures(scope, filters)]) {
      const list = planWithFigures(scope, filters, { sort }, {}, figures)!;
      expect((await selectPlannedPage(handle.db, list, { limit: 1000, sort })).map((r) => r.id), label).toEqual(want);
    }
    const page = await selectContractPage(handle.db, scope, filters, { limit: 25, offset: 10, sort });
    expect(page.map((r) => r.id), `${label} offset 10`).toEqual(want.slice(10, 35));
    expect(await walkByCursor(handle.db, scope, filters, sort, 37), `${label} by cursor`).toEqual(want);
    expect(await countContracts(handle.db, scope, filters), `${label} total`).toBe(rows.filter((r) => naiveMatches(r, filters)).length);
  }
}

const staleRows = async (day: string) =>
  Number(
    (
      await handle.query<{ n: string }>(
        `SELECT count(*) AS n FROM contracts WHERE status = 'completed' AND auto_renewal AND renewal_term IS NOT NULL AND next_renewal_date < '${day}'::date`,
      )
    )[0]!.n,
  );

describe('renewal decisions in the database', () => {
  it('has rows that need rolling forward: evergreen contracts whose renewal date lies years in the past', () => {
    const rolled = rows.filter((r) => r.status === 'completed' && decisionOf(r, today()).nextRenewalDate !== (r.renewalDate ?? null));
    expect(rolled.length).toBeGreaterThan(100);
    expect(rows.some((r) => r.renewalTerm === 'P1M' && r.renewalDate?.endsWith('-31') && r.autoRenewal)).toBe(true);
  });

  it('computes in SQL what lib/renewal-dates.ts computes, over month ends, leap years, terms, notice periods and missing fields', async () => {
    const renewals = ['2016-02-29', '2020-01-31', '2023-03-31', '2024-12-31', '2025-08-30', '2026-11-30', '2026-12-03', '2027-01-31', '2030-05-15', null];
    const terms = ['P1M', 'P1Y', 'P2Y', 'P3Y', 'P3M', 'P6M', 'P2W', 'P45D', 'P1Y6M', 'P1M15D', null];
    const notices = ['P30D', 'P90D', 'P3M', 'P8W', 'P1Y', null];
    const days = ['2026-12-03', '2027-02-28', '2028-02-29', '2028-03-01', '2026-01-31'];
    const inputs = renewals.flatMap((renewal) => terms.flatMap((term) => notices.flatMap((notice) => days.flatMap((day) => [true, false, null].map((auto) => ({ renewal, term, notice, day, auto }))))));
    const literal = (v: string | null) => (v === null ? 'NULL' : `'${v}'`);
    const values = inputs.map((c, i) => `(${i}, ${literal(c.renewal)}::date, ${c.auto === null ? 'NULL' : c.auto}::boolean, ${literal(c.term)}, ${literal(c.notice)}, '${c.day}'::date)`).join(',');
    const got = await handle.query<{ i: number; next: string | null; notice: string | null }>(
      `SELECT i, n::text AS next, contract_notice_deadline(n, auto, notice)::text AS notice
       FROM (SELECT i, auto, notice, contract_next_renewal(renewal, auto, term, day) AS n FROM (VALUES ${values}) AS v(i, renewal, auto, term, notice, day)) s ORDER BY i`,
    );
    const want = inputs.map((c) => {
      const d = renewalDecision({ renewalDate: c.renewal, autoRenewal: c.auto, renewalTerm: c.term, noticePeriod: c.notice }, c.day);
      return { next: d.nextRenewalDate, notice: d.noticeDeadline };
    });
    expect(got.map((r) => ({ next: r.next, notice: r.notice }))).toEqual(want);
  });

  it('stores the extracted renewal date on a write (never ahead of the rule), and a roll to a day gives the first renewal on or after it', async () => {
    const stored = await handle.query<{ id: string; next: string | null; notice: string | null }>('SELECT id, next_renewal_date::text AS next, notice_deadline::text AS notice FROM contracts');
    const byId = new Map(stored.map((r) => [r.id, r]));
    // As of the renewal date itself: right for every day up to it.
    for (const r of rows) {
      const asWritten = decisionOf(r, r.renewalDate ?? '0001-01-01');
      expect({ next: byId.get(r.id!)!.next, notice: byId.get(r.id!)!.notice }, r.id).toEqual({ next: asWritten.nextRenewalDate, notice: asWritten.noticeDeadline });
    }
    // Setting next_renewal_date to any day stores the rule's answer for that day, never the value written.
    const evergreen = rows.find((r) => r.autoRenewal && r.renewalTerm === 'P1M' && r.renewalDate! < '2020-01-01')!;
    await handle.db.update(contracts).set({ nextRenewalDate: '2031-07-04' }).where(sql`${contracts.id} = ${evergreen.id}`);
    const [after] = await handle.query<{ next: string; notice: string | null }>(`SELECT next_renewal_date::text AS next, notice_deadline::text AS notice FROM contracts WHERE id = '${evergreen.id}'`);
    expect(after).toEqual({ next: decisionOf(evergreen, '2031-07-04').nextRenewalDate, notice: decisionOf(evergreen, '2031-07-04').noticeDeadline });
    // A change of what it derives from starts again from the renewal date.
    await handle.db.update(contracts).set({ renewalTerm: evergreen.renewalTerm }).where(sql`${contracts.id} = ${evergreen.id}`);
    const [again] = await handle.query<{ next: string }>(`SELECT next_renewal_date::text AS next FROM contracts WHERE id = '${evergreen.id}'`);
    expect(again!.next).toBe(evergreen.renewalDate);
  });

  it('answers as the rule does today, and on later days with no job run (stale rows read by the rule), and again once the job has rolled them', async () => {
    // Nothing rolled yet: every evergreen contract whose renewal date has passed is read by the rule.
    await expectRuleAnswers(addDays(today(), -1));
    await expectRuleAnswers(today());
    const later = addDays(today(), 400);
    expect(await staleRows(later)).toBeGreaterThan(50);
    await expectRuleAnswers(later);
    // The job rolls as of yesterday in the first minutes of a day: that day's renewals stay stale.
    expect([rollingDay(new Date('2027-03-01T00:09:59Z')), rollingDay(new Date('2027-03-01T00:10:00Z'))]).toEqual(['2027-02-28', '2027-03-01']);
    expect(await rollRenewals(handle.db, rollingDay(new Date(`${later}T00:05:00Z`)))).toBeGreaterThan(50);
    expect(await staleRows(addDays(later, -1))).toBe(0);
    expect(await staleRows(later)).toBeLessThan(10);
    await expectRuleAnswers(later);
    await expectRuleAnswers(addDays(later, -1));
    // Then as of today: none is left, and a list plans no stale branch (the figures' probe).
    await rollRenewals(handle.db, rollingDay(new Date(`${later}T00:15:00Z`)));
    expect(await staleRows(later)).toBe(0);
    const planned = await planContractList(handle.db, scope, { noticeFrom: later, noticeTo: addDays(later, 30), today: later }, { sort: { field: 'notice_deadline', descending: false } });
    expect(planned!.plan.page.stale).toBe(false);
    await expectRuleAnswers(later);
    // Rolled rows keep their updated_at: the contract's data did not change.
    const moved = await handle.query<{ n: string }>(`SELECT count(*) AS n FROM contracts WHERE updated_at >= '2026-02-01'`);
    expect(Number(moved[0]!.n)).toBe(0);
  }, 120_000);

  it('moves day by day over a year, the job running one day in seven: every day the renewing and notice windows are the rule\'s', async () => {
    const start = addDays(today(), 800);
    for (let d = 0; d <= 366; d++) {
      const day = addDays(start, d);
      if (d % 7 === 3) await rollRenewals(handle.db, day);
      for (const filters of [
        { renewalFrom: day, renewalTo: addDays(day, 30), today: day },
        { noticeFrom: day, noticeTo: addDays(day, 30), today: day },
      ] satisfies ContractFilters[]) {
        const field = filters.renewalFrom ? 'next_renewal_date' : 'notice_deadline';
        const got = (await selectContractPage(handle.db, scope, filters, { limit: 1000, sort: { field, descending: false } })).map((r) => r.id);
        expect(got, `${day} ${field}`).toEqual(naiveOrder(rows, filters, field, false));
      }
    }
  }, 300_000);

  it('the job picks only rows that move: a term whose next renewal is past the year 9999 is not rolled again and again', async () => {
    const other = '00000000-0000-4000-8000-0000000f0002';
    await handle.db.insert(users).values({ id: other, email: 'renewal-decisions-far@example.com' });
    const far = (n: number): NewContract => ({
      id: `00000000-0000-4000-8000-0000000f09${String(n).padStart(2, '0')}`,
      ownerId: other,
      title: `Far term ${n}`,
      status: 'completed',
      fileName: 'f.pdf',
      fileSize: 1,
      renewalDate: '2020-01-01',
      autoRenewal: true,
      renewalTerm: 'P8000Y',
    });
    await handle.db.insert(contracts).values([far(1), far(2), far(3)]);
    const day = addDays(today(), 1000);
    // Batches of two: without the guard each would pick two of these and "roll" them unchanged.
    await rollRenewals(handle.db, day);
    expect(await rollRenewalDates(handle.db, day, 2)).toBe(0);
    const [row] = await handle.query<{ next: string }>(`SELECT next_renewal_date::text AS next FROM contracts WHERE id = '${far(1).id}'`);
    expect(row!.next).toBe('2020-01-01');
  });
});
