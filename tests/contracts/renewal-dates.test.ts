import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { addDuration, parseDuration, renewalDecision, rollForward, type Duration } from '@/lib/renewal-dates';

/**
 * The renewal rule (lib/renewal-dates.ts, docs/api-guide.md "Renewal decisions"): worked
 * examples, then properties against a naive count of terms. tests/db/renewal-terms.test.ts
 * holds the arithmetic to Postgres's `date + interval`.
 */

const d = (text: string) => parseDuration(text)!;

describe('durations', () => {
  it.each([
    ['P30D', { years: 0, months: 0, weeks: 0, days: 30 }],
    ['P8W', { years: 0, months: 0, weeks: 8, days: 0 }],
    ['P3M', { years: 0, months: 3, weeks: 0, days: 0 }],
    ['P1Y2M3W4D', { years: 1, months: 2, weeks: 3, days: 4 }],
    ['P0D', { years: 0, months: 0, weeks: 0, days: 0 }],
  ])('%s reads as its parts', (text, parts) => expect(parseDuration(text)).toEqual(parts));

  it.each(['', 'P', '30D', 'P1.5M', 'P1D1M', 'PT1H', 'P1Y2M3W4DT5H', 'p1y', 'P12345D', 'P-1D', ' P1D'])('%j is not one', (text) => {
    expect(parseDuration(text)).toBeUndefined();
  });
});

describe('calendar arithmetic', () => {
  it.each([
    ['2027-03-31', 'P1M', -1, '2027-02-28'],
    ['2028-03-31', 'P1M', -1, '2028-02-29'],
    ['2027-01-31', 'P1M', 1, '2027-02-28'],
    ['2028-01-31', 'P1M', 1, '2028-02-29'],
    ['2027-01-31', 'P1M', 2, '2027-03-31'],
    ['2028-02-29', 'P1Y', 1, '2029-02-28'],
    ['2028-02-29', 'P1Y', 4, '2032-02-29'],
    ['2027-03-31', 'P1M15D', -1, '2027-02-13'],
    ['2027-01-31', 'P1Y2M3W4D', 1, '2028-04-25'],
    ['2027-03-01', 'P90D', -1, '2026-12-01'],
    ['9999-12-01', 'P1M', 1, undefined],
    ['0001-01-15', 'P1M', -1, undefined],
  ] as const)('%s + %i × %s = %s', (date, duration, factor, want) => {
    expect(addDuration(date, d(duration), factor)).toBe(want);
  });
});

describe('the next renewal and the notice deadline', () => {
  const facts = (renewalDate: string | null, more: Partial<Parameters<typeof renewalDecision>[0]> = {}) => ({
    renewalDate,
    autoRenewal: true,
    renewalTerm: 'P1Y',
    noticePeriod: 'P90D',
    ...more,
  });
  it.each([
    ['a renewal today or later stays', facts('2027-03-01'), '2026-12-03', { nextRenewalDate: '2027-03-01', noticeDeadline: '2026-12-01' }],
    ['today itself is the next renewal', facts('2026-12-03'), '2026-12-03', { nextRenewalDate: '2026-12-03', noticeDeadline: '2026-09-04' }],
    ['an evergreen contract rolls forward by whole terms', facts('2019-03-01'), '2026-12-03', { nextRenewalDate: '2027-03-01', noticeDeadline: '2026-12-01' }],
    ['a monthly term from the 31st counts from the contract\'s own day', facts('2026-01-31', { renewalTerm: 'P1M', noticePeriod: 'P1M' }), '2026-03-05', { nextRenewalDate: '2026-03-31', noticeDeadline: '2026-02-28' }],
    ['…and lands on the month\'s last day where it is shorter', facts('2026-01-31', { renewalTerm: 'P1M', noticePeriod: 'P7D' }), '2026-02-10', { nextRenewalDate: '2026-02-28', noticeDeadline: '2026-02-21' }],
    ['not auto-renewing: the stored date, no deadline', facts('2019-03-01', { autoRenewal: false }), '2026-12-03', { nextRenewalDate: '2019-03-01', noticeDeadline: null }],
    ['auto-renewal unknown: the same', facts('2019-03-01', { autoRenewal: null }), '2026-12-03', { nextRenewalDate: '2019-03-01', noticeDeadline: null }],
    ['no term: the stored date, its deadline (passed)', facts('2019-03-01', { renewalTerm: null }), '2026-12-03', { nextRenewalDate: '2019-03-01', noticeDeadline: '2018-12-01' }],
    ['no notice period: no deadline', facts('2027-03-01', { noticePeriod: null }), '2026-12-03', { nextRenewalDate: '2027-03-01', noticeDeadline: null }],
    ['no renewal date: nothing', facts(null), '2026-12-03', { nextRenewalDate: null, noticeDeadline: null }],
    ['a deadline passed: shown, in the past', facts('2026-12-31', { noticePeriod: 'P3M' }), '2026-12-03', { nextRenewalDate: '2026-12-31', noticeDeadline: '2026-09-30' }],
  ])('%s', (_, f, today, want) => {
    expect(renewalDecision(f, today)).toEqual(want);
  });

  it('gives the worked examples of docs/api-guide.md ("Renewal decisions"), today 2026-12-03', () => {
    const rows: [string, boolean, string | null, string | null, string, string | null][] = [
      ['2027-03-01', true, 'P1Y', 'P90D', '2027-03-01', '2026-12-01'],
      ['2019-03-01', true, 'P1Y', 'P3M', '2027-03-01', '2026-12-01'],
      ['2026-01-31', true, 'P1M', 'P1M', '2026-12-31', '2026-11-30'],
      ['2026-01-31', true, 'P1M', 'P7D', '2026-12-31', '2026-12-24'],
      ['2027-03-31', true, 'P1Y', 'P1M', '2027-03-31', '2027-02-28'],
      ['2019-03-01', false, 'P1Y', 'P90D', '2019-03-01', null],
      ['2027-06-30', true, null, null, '2027-06-30', null],
    ];
    for (const [renewalDate, autoRenewal, renewalTerm, noticePeriod, next, deadline] of rows) {
      expect(renewalDecision({ renewalDate, autoRenewal, renewalTerm, noticePeriod }, '2026-12-03')).toEqual({ nextRenewalDate: next, noticeDeadline: deadline });
    }
  });

  const dateArb = fc.date({ min: new Date('1990-01-01T00:00:00Z'), max: new Date('2040-12-31T00:00:00Z'), noInvalidDate: true }).map((x) => x.toISOString().slice(0, 10));
  const termArb = fc
    .record({ years: fc.nat(3), months: fc.nat(14), weeks: fc.nat(5), days: fc.nat(40) })
    .filter((t) => t.years + t.months + t.weeks + t.days > 0);

  it('rolls forward to the first k-th renewal on or after today, as counting terms one by one does', () => {
    fc.assert(
      fc.property(dateArb, termArb, dateArb, (renewal, term: Duration, today) => {
        const got = rollForward(renewal, term, today);
        let k = 1;
        let naive = addDuration(renewal, term, k);
        while (naive !== undefined && naive < today) naive = addDuration(renewal, term, ++k);
        expect(got).toBe(naive);
        // And it is today or later, while the term before it (k - 1 ≥ 1) was before today.
        if (got !== undefined) expect(got >= today).toBe(true);
      }),
      { numRuns: 2000, seed: 20261203 },
    );
  });
});
