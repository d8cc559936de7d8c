import { describe, expect, it } from 'vitest';
import { decisionInWords } from '@/components/contracts/renewal-words';
import { renewalDecision } from '@/lib/renewal-dates';

/**
 * A contract's page explains its next renewal and notice deadline in words
 * (components/contracts/renewal-words.ts), from the same fields the API returns, which
 * lib/renewal-dates.ts computes: the sentence must say what the rule decided.
 */

const TODAY = '2026-12-03';

function data(fields: { renewal_date: string | null; auto_renewal: boolean | null; renewal_term: string | null; notice_period: string | null }) {
  const { nextRenewalDate, noticeDeadline } = renewalDecision(
    { renewalDate: fields.renewal_date, autoRenewal: fields.auto_renewal, renewalTerm: fields.renewal_term, noticePeriod: fields.notice_period },
    TODAY,
  );
  return {
    expiration_date: null,
    ...fields,
    next_renewal_date: nextRenewalDate,
    notice_deadline: noticeDeadline,
    contract_value: null,
    currency: null,
    parties: { provider: null, client: null },
    summary: null,
    confidence_score: null,
  };
}

describe('a renewal decision in words', () => {
  it.each([
    ['auto-renewing, deadline ahead', { renewal_date: '2027-03-01', auto_renewal: true, renewal_term: 'P1Y', notice_period: 'P30D' }, 'Renews next on 1 Mar 2027, automatically; 30 days\' notice: act by 30 Jan 2027.'],
    ['rolled forward from years back', { renewal_date: '2019-03-01', auto_renewal: true, renewal_term: 'P1Y', notice_period: 'P60D' }, 'Renewed on 1 Mar 2019 and every year since: renews next on 1 Mar 2027, automatically; 60 days\' notice: act by 31 Dec 2026.'],
    ['rolled forward by two years', { renewal_date: '2021-01-31', auto_renewal: true, renewal_term: 'P2Y', notice_period: 'P3M' }, 'Renewed on 31 Jan 2021 and every 2 years since: renews next on 31 Jan 2027, automatically; 3 months\' notice: the deadline, 31 Oct 2026, has passed: this renewal can no longer be stopped.'],
    ['deadline passed', { renewal_date: '2027-03-01', auto_renewal: true, renewal_term: 'P1Y', notice_period: 'P90D' }, 'Renews next on 1 Mar 2027, automatically; 90 days\' notice: the deadline, 1 Dec 2026, has passed: this renewal can no longer be stopped.'],
    ['a singular period', { renewal_date: '2027-03-31', auto_renewal: true, renewal_term: 'P1Y', notice_period: 'P1M' }, 'Renews next on 31 Mar 2027, automatically; 1 month\'s notice: act by 28 Feb 2027.'],
    ['no notice period', { renewal_date: '2027-06-30', auto_renewal: true, renewal_term: null, notice_period: null }, 'Renews next on 30 Jun 2027, automatically. No notice period was found: check the contract for how to stop it.'],
    ['not automatic, ahead', { renewal_date: '2027-06-30', auto_renewal: false, renewal_term: null, notice_period: 'P30D' }, 'Renews next on 30 Jun 2027. It does not renew automatically, so no notice is needed to stop it.'],
    ['not automatic, passed', { renewal_date: '2024-01-01', auto_renewal: false, renewal_term: 'P1Y', notice_period: null }, 'The renewal date, 1 Jan 2024, has passed, and no later renewal follows: it does not renew automatically.'],
    ['automatic without a term, passed', { renewal_date: '2024-01-01', auto_renewal: true, renewal_term: null, notice_period: 'P30D' }, 'The renewal date, 1 Jan 2024, has passed, and no later renewal follows: no renewal term was found.'],
    ['no renewal date', { renewal_date: null, auto_renewal: true, renewal_term: 'P1Y', notice_period: 'P30D' }, 'No renewal date was found in this contract, so there is no renewal to act on.'],
  ] as const)('%s', (_, fields, sentence) => {
    expect(decisionInWords(data(fields), TODAY)).toBe(sentence);
  });
});
