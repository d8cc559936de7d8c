import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '@/db/client';
import { contractTimelineStatement, selectContractTimeline } from '@/db/queries/contracts/timeline';
import { contracts, users, type NewContract } from '@/db/schema';
import { DEMO_ORGS, DEMO_USERS, seedDemo } from '@/db/seed/demo';
import { AppError } from '@/server/errors';
import { contractTimeline, monthStart, timelineMonths, type ContractTimeline } from '@/server/contracts/timeline';
import { createTestDatabase } from '../helpers/db';

/**
 * The chart's figures on the demo data (db/seed/demo.ts) plus a few edge-case contracts of
 * one extra user, with "today" fixed at 2026-11-22: the window is [2026-11-22, 2027-11-01),
 * today included, every date before it left out (acme-8, renewing yearly since 2023-11-01,
 * renewed on 2026-11-01, 21 days earlier: its next renewal is 2027-11-01, after the window).
 * Every expectation below is worked out by hand from the seed's dates, values and
 * currencies.
 */

const TODAY = '2026-11-22';
const MONTHS = timelineMonths(TODAY);

const ALICE = { userId: DEMO_USERS.alice.id, organizationIds: [DEMO_ORGS.acme.id] };
const BOB = { userId: DEMO_USERS.bob.id, organizationIds: [DEMO_ORGS.acme.id, DEMO_ORGS.globex.id] };
const CAROL = { userId: DEMO_USERS.carol.id, organizationIds: [] };
const DAVE_ID = '00000000-0000-4000-8000-00000000da7e';
const DAVE = { userId: DAVE_ID, organizationIds: [] };

const base = { ownerId: DAVE_ID, fileName: 'f.pdf', fileSize: 1, autoRenewal: true, provider: null, client: null, summary: null, confidenceScore: 0.9 };
const id = (n: number) => `00000000-0000-4000-8000-0000000da7${String(n).padStart(2, '0')}`;
const DAVE_ROWS: NewContract[] = [
  // The window's first day (today) and last day are inside.
  { ...base, id: id(1), title: 'Edges inside', status: 'completed', renewalDate: '2026-11-22', expirationDate: '2027-10-31', contractValue: 100.1, currency: 'USD' },
  // Yesterday and the first day after the window are outside.
  { ...base, id: id(2), title: 'Edges outside', status: 'completed', renewalDate: '2026-11-21', expirationDate: '2027-11-01', contractValue: 7, currency: 'USD' },
  // Earlier this month: past, although in the window's first month.
  { ...base, id: id(9), title: 'Earlier this month', status: 'completed', renewalDate: '2026-11-01', expirationDate: '2026-11-10', contractValue: 3, currency: 'USD' },
  // Not completed: raw dates and values are not extracted data and never count.
  { ...base, id: id(3), title: 'Pending', status: 'pending', renewalDate: '2027-02-10', expirationDate: '2027-02-20', contractValue: 999, currency: 'USD' },
  { ...base, id: id(4), title: 'Processing', status: 'processing', renewalDate: '2027-02-11', expirationDate: null, contractValue: 999, currency: 'EUR' },
  { ...base, id: id(5), title: 'Failed', status: 'failed', renewalDate: null, expirationDate: '2027-02-12', contractValue: 999, currency: 'GBP' },
  // Counted, but a value without a currency (or a currency without a value) has no series to go to.
  { ...base, id: id(6), title: 'No currency', status: 'completed', renewalDate: '2027-02-01', expirationDate: null, contractValue: 500, currency: null },
  { ...base, id: id(7), title: 'No value', status: 'completed', renewalDate: null, expirationDate: '2027-03-03', contractValue: null, currency: 'EUR' },
  // Cents add up exactly: 100.10 + 0.20 = 100.30 in October.
  { ...base, id: id(8), title: 'Cents', status: 'completed', renewalDate: '2027-10-15', expirationDate: null, contractValue: 0.2, currency: 'USD' },
];

let handle: DatabaseHandle;

beforeAll(async () => {
  handle = await createTestDatabase();
  await seedDemo(handle.db);
  await handle.db.insert(users).values({ id: DAVE_ID, email: 'dave@example.com', name: 'Dave' });
  await handle.db.insert(contracts).values(DAVE_ROWS);
});
afterAll(async () => {
  await handle?.close();
});

/** Months with something in them, as { 'YYYY-MM': [renewals, expirations] }. */
function counts(t: ContractTimeline): Record<string, [number, number]> {
  return Object.fromEntries(t.months.filter((m) => m.renewals + m.expirations > 0).map((m) => [m.month, [m.renewals, m.expirations]]));
}

/** Months with a value in one currency, as { 'YYYY-MM': [renewing, expiring] }. */
function values(t: ContractTimeline, currency: string): Record<string, [number, number]> {
  const series = t.currencies.find((c) => c.currency === currency);
  if (!series) throw new Error(`no ${currency} series`);
  return Object.fromEntries(series.months.filter((m) => m.renewing + m.expiring > 0).map((m) => [m.month, [m.renewing, m.expiring]]));
}

describe('the window', () => {
  it('is the 12 months starting with the current month, in UTC, across the year boundary', () => {
    expect(MONTHS).toEqual([
      '2026-11', '2026-12', '2027-01', '2027-02', '2027-03', '2027-04',
      '2027-05', '2027-06', '2027-07', '2027-08', '2027-09', '2027-10',
    ]);
    expect(monthStart('2026-11-30')).toBe('2026-11-01');
    expect(monthStart('2026-12-31', 1)).toBe('2027-01-01');
    expect(monthStart('2027-01-31', 12)).toBe('2028-01-01');
  });

  it('lists every month, zeros included, whichever day of the month today is; it starts today', async () => {
    for (const today of ['2026-11-01', TODAY, '2026-11-30']) {
      const t = await contractTimeline(handle.db, CAROL, { today });
      expect(t.from).toBe(today);
      expect(t.to).toBe('2027-11-01');
      expect(t.months.map((m) => m.month)).toEqual(MONTHS);
    }
  });
});

describe('alice (her personal contracts and Acme Corp)', () => {
  it('counts renewals and expirations per month, from today on', async () => {
    const t = await contractTimeline(handle.db, ALICE, { today: TODAY });
    // acme-8 renewed 11-01 (past: not counted) and expires 11-30; acme-3 renews 01-01 and
    // expires 01-31, alice-2 expires 01-15; alice-1 renews 03-01 and expires 03-31; acme-1
    // renews 04-01 and expires 06-30. alice-3, acme-2 and acme-4 fall after the window.
    expect(counts(t)).toEqual({
      '2026-11': [0, 1],
      '2027-01': [1, 2],
      '2027-03': [1, 1],
      '2027-04': [1, 0],
      '2027-06': [0, 1],
    });
    expect(t.totalRenewals).toBe(3);
    expect(t.totalExpirations).toBe(5);
    expect(t.withoutValue).toBe(0);
    // Notice deadlines: acme-1 on 01-01 (90 days before 04-01), alice-1 on 01-30 (30 days
    // before 03-01), acme-8 on 2027-08-01 (three months before its next renewal); acme-3's
    // (2026-11-02) has passed, alice-3's (2028-03-01) is after the window.
    expect(Object.fromEntries(t.months.filter((m) => m.notices > 0).map((m) => [m.month, m.notices]))).toEqual({ '2027-01': 2, '2027-08': 1 });
    expect(t.totalNotices).toBe(3);
  });

  it('sums values per currency and never adds two currencies together', async () => {
    const t = await contractTimeline(handle.db, ALICE, { today: TODAY });
    expect(t.currencies.map((c) => c.currency)).toEqual(['EUR', 'GBP', 'USD']);
    // January: acme-3's 1,250,000 USD and alice-2's 950.50 EUR expire; they stay apart.
    expect(values(t, 'USD')).toEqual({
      '2027-01': [1_250_000, 1_250_000],
      '2027-03': [18_000, 18_000],
      '2027-04': [148_500, 0],
      '2027-06': [0, 148_500],
    });
    expect(values(t, 'EUR')).toEqual({ '2027-01': [0, 950.5] });
    expect(values(t, 'GBP')).toEqual({ '2026-11': [0, 86_400.75] });
    const usd = t.currencies.find((c) => c.currency === 'USD')!;
    expect([usd.totalRenewing, usd.totalExpiring]).toEqual([1_416_500, 1_416_500]);
    for (const series of t.currencies) expect(series.months.map((m) => m.month)).toEqual(MONTHS);
  });

  it('follows the organisation filter: Acme Corp only leaves her personal contracts out', async () => {
    const t = await contractTimeline(handle.db, ALICE, { today: TODAY, organizationId: DEMO_ORGS.acme.id });
    expect(counts(t)).toEqual({
      '2026-11': [0, 1],
      '2027-01': [1, 1],
      '2027-04': [1, 0],
      '2027-06': [0, 1],
    });
    expect(t.currencies.map((c) => c.currency)).toEqual(['GBP', 'USD']);
  });

  it('refuses an organisation she is not a member of, like the list does', async () => {
    const refused = contractTimeline(handle.db, ALICE, { today: TODAY, organizationId: DEMO_ORGS.globex.id });
    await expect(refused).rejects.toBeInstanceOf(AppError);
    await expect(refused).rejects.toMatchObject({ code: 'forbidden' });
  });
});

describe('bob and carol', () => {
  it('bob sees Globex and his broadband contract on top of Acme', async () => {
    const t = await contractTimeline(handle.db, BOB, { today: TODAY });
    // Acme as for alice (without alice's personal contracts), bob-1 renews 04-20 and
    // expires 05-20, globex-1 renews 08-01 and expires 10-31.
    expect(counts(t)).toEqual({
      '2026-11': [0, 1],
      '2027-01': [1, 1],
      '2027-04': [2, 0],
      '2027-05': [0, 1],
      '2027-06': [0, 1],
      '2027-08': [1, 0],
      '2027-10': [0, 1],
    });
    expect(values(t, 'GBP')).toEqual({ '2026-11': [0, 86_400.75], '2027-04': [540, 0], '2027-05': [0, 540] });
    const globex = await contractTimeline(handle.db, BOB, { today: TODAY, organizationId: DEMO_ORGS.globex.id });
    expect(counts(globex)).toEqual({ '2027-08': [1, 0], '2027-10': [0, 1] });
    expect(values(globex, 'USD')).toEqual({ '2027-08': [2_000_000, 0], '2027-10': [0, 2_000_000] });
  });

  it('carol sees only her own two contracts', async () => {
    const t = await contractTimeline(handle.db, CAROL, { today: TODAY });
    expect(counts(t)).toEqual({ '2026-12': [1, 1], '2027-09': [1, 1] });
    expect(values(t, 'USD')).toEqual({ '2026-12': [2_400, 2_400] });
    expect(values(t, 'CHF')).toEqual({ '2027-09': [3_200, 3_200] });
  });

  it('a later today moves the window: in March 2027 November 2026 is gone and 2028 starts', async () => {
    const t = await contractTimeline(handle.db, ALICE, { today: '2027-03-05' });
    expect(t.months[0]!.month).toBe('2027-03');
    expect(t.months[11]!.month).toBe('2028-02');
    // alice-1 renewed on 03-01, four days before: it renews next on 04-01 (monthly), beside
    // acme-1; acme-8 (yearly since 2023-11-01) next on 2027-11-01, acme-3 on 2028-01-01.
    expect(counts(t)).toEqual({ '2027-03': [0, 1], '2027-04': [2, 0], '2027-06': [0, 1], '2027-11': [1, 0], '2028-01': [1, 0] });
  });
});

describe('edge cases (dave)', () => {
  it('includes today and the last day of the window and nothing outside it', async () => {
    const t = await contractTimeline(handle.db, DAVE, { today: TODAY });
    expect(counts(t)).toEqual({
      '2026-11': [1, 0], // id(1) renews today; id(2) yesterday and id(9) on the 1st and the 10th are past
      '2027-02': [1, 0], // id(6), no currency; the pending, processing and failed contracts are not counted
      '2027-03': [0, 1], // id(7), no value
      '2027-10': [1, 1], // id(8) renews, id(1) expires on the last day
    });
  });

  it('does not count pending, processing or failed contracts, whatever their raw columns hold', async () => {
    const t = await contractTimeline(handle.db, DAVE, { today: TODAY });
    expect(t.months.find((m) => m.month === '2027-02')).toEqual({ month: '2027-02', renewals: 1, expirations: 0, notices: 0 });
    // Their 999s in USD, EUR and GBP appear nowhere.
    expect(t.currencies.map((c) => c.currency)).toEqual(['USD']);
    expect(JSON.stringify(t)).not.toContain('999');
  });

  it('counts contracts without a value or currency but keeps them out of the value series', async () => {
    const t = await contractTimeline(handle.db, DAVE, { today: TODAY });
    expect(t.withoutValue).toBe(2);
    expect(values(t, 'USD')).toEqual({ '2026-11': [100.1, 0], '2027-10': [0.2, 100.1] });
    const usd = t.currencies.find((c) => c.currency === 'USD')!;
    expect(usd.totalRenewing).toBe(100.3);
    expect(usd.totalExpiring).toBe(100.1);
  });
});

describe('the statement', () => {
  it('returns one row per month, kind and currency, with exact decimal sums', async () => {
    const rows = await selectContractTimeline(handle.db, ALICE, { from: '2026-11-01', to: '2027-11-01' });
    // Notice deadlines: acme-3's on 11-02, acme-1's and alice-1's in January; acme-8 renews
    // today (11-01), so its deadline was in August, before the window.
    expect(rows.filter((r) => r.kind === 'notice')).toEqual([
      { month: '2026-11', kind: 'notice', currency: 'USD', count: 1, valued: 1, total: '1250000.00' },
      { month: '2027-01', kind: 'notice', currency: 'USD', count: 2, valued: 2, total: '166500.00' },
    ]);
    expect(rows.filter((r) => r.kind !== 'notice')).toEqual([
      { month: '2026-11', kind: 'expiration', currency: 'GBP', count: 1, valued: 1, total: '86400.75' },
      { month: '2026-11', kind: 'renewal', currency: 'GBP', count: 1, valued: 1, total: '86400.75' },
      { month: '2027-01', kind: 'expiration', currency: 'EUR', count: 1, valued: 1, total: '950.50' },
      { month: '2027-01', kind: 'expiration', currency: 'USD', count: 1, valued: 1, total: '1250000.00' },
      { month: '2027-01', kind: 'renewal', currency: 'USD', count: 1, valued: 1, total: '1250000.00' },
      { month: '2027-03', kind: 'expiration', currency: 'USD', count: 1, valued: 1, total: '18000.00' },
      { month: '2027-03', kind: 'renewal', currency: 'USD', count: 1, valued: 1, total: '18000.00' },
      { month: '2027-04', kind: 'renewal', currency: 'USD', count: 1, valued: 1, total: '148500.00' },
      { month: '2027-06', kind: 'expiration', currency: 'USD', count: 1, valued: 1, total: '148500.00' },
    ]);
  });

  it('is a single statement whose text does not depend on the values', () => {
    const a = contractTimelineStatement(ALICE, { from: '2026-11-01', to: '2027-11-01' });
    const b = contractTimelineStatement(BOB, { from: '2027-01-01', to: '2028-01-01' });
    expect(a.name).toBe(b.name);
    const text = (s: typeof a) => s.build(handle.db).toSQL().sql;
    expect(text(a)).toBe(text(b));
    expect(text(a).match(/\bselect\b/gi)).toHaveLength(4); // the outer grouping over three branches
    const org = contractTimelineStatement(BOB, { from: '2027-01-01', to: '2028-01-01', organizationId: DEMO_ORGS.acme.id });
    expect(org.name).not.toBe(a.name);
    expect(text(org)).not.toContain('owner_id');
  });
});
