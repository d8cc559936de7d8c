import { describeDuration } from '@/lib/renewal-dates';
import type { ContractDetail } from '@/server/contracts/shape';
import { formatDate } from './format';

type ExtractedData = NonNullable<ContractDetail['data']>;

/**
 * How the next renewal and the deadline were computed, in words (the rule of
 * lib/renewal-dates.ts), for a contract's page: "Renews next on 1 Mar 2027, automatically;
 * 90 days' notice: act by 1 Dec 2026."
 */
export function decisionInWords(data: ExtractedData, today: string): string {
  const { renewal_date: renewal, next_renewal_date: next, notice_deadline: deadline, notice_period: notice, renewal_term: term, auto_renewal: auto } = data;
  if (next === null) return 'No renewal date was found in this contract, so there is no renewal to act on.';
  // A past date that does not roll forward (no automatic renewal, or no term): nothing follows it.
  if (next < today) {
    const why = auto !== true ? 'it does not renew automatically' : 'no renewal term was found';
    return `The renewal date, ${formatDate(next)}, has passed, and no later renewal follows: ${why}.`;
  }
  const rolled = renewal !== null && next !== renewal && term !== null ? `Renewed on ${formatDate(renewal)} and every ${everyTerm(term)} since: ` : '';
  const renews = `${rolled}${rolled ? 'renews' : 'Renews'} next on ${formatDate(next)}`;
  if (auto !== true) return `${renews}. It does not renew automatically, so no notice is needed to stop it.`;
  if (notice === null || deadline === null) return `${renews}, automatically. No notice period was found: check the contract for how to stop it.`;
  const act = deadline < today ? `the deadline, ${formatDate(deadline)}, has passed: this renewal can no longer be stopped` : `act by ${formatDate(deadline)}`;
  const period = describeDuration(notice);
  return `${renews}, automatically; ${period}${period.endsWith('s') ? "'" : "'s"} notice: ${act}.`;
}

/** "year" for P1Y, "2 years", "1 year 6 months": what follows "every". */
function everyTerm(term: string): string {
  const words = describeDuration(term);
  return /^1 [a-z]+$/.test(words) ? words.slice(2) : words;
}
