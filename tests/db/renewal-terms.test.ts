import { eq } from 'drizzle-orm';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '@/db/client';
import { contracts, users } from '@/db/schema';
import { addDuration, DURATION_PATTERN, parseDuration, renewalDecision } from '@/lib/renewal-dates';
import { getContract, listContractDetails } from '@/server/contracts/service';
import { utcToday } from '@/server/dates';
import { createTestDatabase } from '../helpers/db';

/**
 * The two durations the pipeline writes (contracts.notice_period, renewal_term): the
 * database itself refuses any other text, with the constraint's name in its error; and
 * the TypeScript arithmetic of lib/renewal-dates.ts is Postgres's `date + interval`.
 */

let handle: DatabaseHandle;
const USER = '00000000-0000-4000-8000-0000000e0034';
beforeAll(async () => {
  handle = await createTestDatabase();
  await handle.db.insert(users).values({ id: USER, email: 'renewal-terms@example.com' });
});
afterAll(async () => handle?.close());

const insert = (values: { noticePeriod?: string; renewalTerm?: string }) =>
  handle.db.insert(contracts).values({ ownerId: USER, title: 'T', status: 'completed', fileName: 'f.pdf', fileSize: 1, ...values });

/** The error's own message, under Drizzle's "Failed query" wrapper. */
async function refusal(values: { noticePeriod?: string; renewalTerm?: string }): Promise<string | undefined> {
  try {
    await insert(values);
    return undefined;
  } catch (error) {
    let e: unknown = error;
    while (e instanceof Error && e.cause) e = e.cause;
    return (e as Error).message;
  }
}

describe('notice_period and renewal_term', () => {
  it.each(['P30D', 'P8W', 'P3M', 'P6M', 'P1Y', 'P1Y2M3W4D', 'P9999D'])('accept %s', async (text) => {
    expect(await refusal({ noticePeriod: text, renewalTerm: text })).toBeUndefined();
  });

  it.each(['', 'P', '30 days', 'P1.5M', 'P1D1M', 'PT1H', 'p1y', 'P12345D', 'P-1D', 'P1Y ', '1 year'])('refuse %j, naming the constraint', async (text) => {
    expect(await refusal({ noticePeriod: text })).toMatch(/contracts_notice_period_iso8601/);
    expect(await refusal({ renewalTerm: text })).toMatch(/contracts_renewal_term_iso8601/);
  });

  it('refuse a term without length, not a notice period of none', async () => {
    expect(await refusal({ renewalTerm: 'P0D' })).toMatch(/contracts_renewal_term_iso8601/);
    expect(await refusal({ renewalTerm: 'P0Y0M' })).toMatch(/contracts_renewal_term_iso8601/);
    expect(await refusal({ noticePeriod: 'P0D' })).toBeUndefined();
  });

  it('the database and DURATION_PATTERN accept the same texts', async () => {
    const texts = fc.sample(fc.stringMatching(/^P?[0-9]{0,5}[YMWD]?[0-9]{0,2}[YMWDT]?$/), { numRuns: 200, seed: 34 });
    for (const text of texts) {
      const accepted = (await refusal({ noticePeriod: text })) === undefined;
      expect(accepted, text).toBe(DURATION_PATTERN.test(text));
    }
  });

  it('adds and subtracts as Postgres adds an interval to a date', async () => {
    const dateArb = fc.date({ min: new Date('1990-01-01T00:00:00Z'), max: new Date('2060-12-31T00:00:00Z'), noInvalidDate: true }).map((x) => x.toISOString().slice(0, 10));
    const durationArb = fc
      .record({ y: fc.nat(3), m: fc.nat(14), w: fc.nat(5), d: fc.nat(40) })
      .filter((t) => t.y + t.m + t.w + t.d > 0)
      .map((t) => `P${t.y ? `${t.y}Y` : ''}${t.m ? `${t.m}M` : ''}${t.w ? `${t.w}W` : ''}${t.d ? `${t.d}D` : ''}`);
    const cases = fc.sample(fc.tuple(dateArb, durationArb, fc.constantFrom(-1, 1, 2, 7)), { numRuns: 300, seed: 20261203 });
    const rows = await handle.query<{ n: number; out: string }>(
      `SELECT n, (c.date::date + c.duration::interval * c.factor)::date::text AS out
       FROM jsonb_to_recordset($1::jsonb) AS c(n int, date text, duration text, factor int) ORDER BY n`,
      [JSON.stringify(cases.map(([date, duration, factor], n) => ({ n, date, duration, factor })))],
    );
    for (const row of rows) {
      const [date, duration, factor] = cases[row.n]!;
      expect(addDuration(date, parseDuration(duration)!, factor), `${date} + ${factor} × ${duration}`).toBe(row.out);
    }
    expect(rows.length).toBe(cases.length);
  });

  it('rolls an evergreen contract forward in get-one and in the contracts page\'s list of details alike', async () => {
    const [row] = await insert({ noticePeriod: 'P30D', renewalTerm: 'P1M' }).returning({ id: contracts.id });
    await handle.db.update(contracts).set({ renewalDate: '2024-01-31', autoRenewal: true }).where(eq(contracts.id, row!.id));
    const want = renewalDecision({ renewalDate: '2024-01-31', autoRenewal: true, renewalTerm: 'P1M', noticePeriod: 'P30D' }, utcToday());
    expect(want.nextRenewalDate! >= utcToday()).toBe(true);
    const scope = { userId: USER, organizationIds: [] };
    const one = await getContract(handle.db, scope, row!.id);
    expect({ next: one.data?.next_renewal_date, deadline: one.data?.notice_deadline }).toEqual({ next: want.nextRenewalDate, deadline: want.noticeDeadline });
    const listed = await listContractDetails(handle.db, scope, { filters: {}, limit: 100, offset: 0 });
    const mine = listed.contracts.find((c) => c.id === row!.id)!;
    expect({ next: mine.data?.next_renewal_date, deadline: mine.data?.notice_deadline }).toEqual({ next: want.nextRenewalDate, deadline: want.noticeDeadline });
  });
});
