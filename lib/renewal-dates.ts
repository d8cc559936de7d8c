/**
 * Renewal decisions: a contract's next renewal (an evergreen contract rolled forward by its
 * term) and the last day notice stops it, computed from the extracted renewal date, the
 * renewal term and the notice period (ISO 8601 durations). The rule is written once here
 * and in the API guide ("Renewal decisions"), with worked examples:
 *
 * - A duration is `P[nY][nM][nW][nD]` (at least one part, each 0 to 9999): calendar years
 *   and months first, then weeks and days, as Postgres adds an interval to a date.
 * - Months and years are calendar units, clamped to the month's last day:
 *   2027-03-31 − P1M = 2027-02-28, 2027-01-31 + P1M = 2027-02-28, 2028-01-31 + P1M = 2028-02-29.
 * - The k-th renewal is `renewal_date + k × renewal_term`, always counted from the
 *   contract's own day (2027-01-31 + 2 × P1M = 2027-03-31, not 2027-02-28 + P1M).
 * - `next_renewal_date`: `renewal_date` when it is today or later; for an auto-renewing
 *   contract whose `renewal_date` has passed and whose term is known, the first k-th
 *   renewal that is today or later; otherwise `renewal_date`.
 * - `notice_deadline`: for an auto-renewing contract with a notice period and a next
 *   renewal, `next_renewal_date − notice_period`; else null. Past means this renewal can
 *   no longer be stopped.
 * - "Today" is the UTC date (server/dates.ts, utcToday), as for the list's windows.
 */

export interface Duration {
  years: number;
  months: number;
  weeks: number;
  days: number;
}

/**
 * The form the database accepts (db/schema.ts, the CHECK constraints of notice_period and
 * renewal_term): the date designators only, each part at most four digits, in order.
 */
export const DURATION_PATTERN = /^P(?!$)(?:(\d{1,4})Y)?(?:(\d{1,4})M)?(?:(\d{1,4})W)?(?:(\d{1,4})D)?$/;

/** A duration's parts, or undefined when the text is not one. */
export function parseDuration(text: string): Duration | undefined {
  const match = DURATION_PATTERN.exec(text);
  if (!match) return undefined;
  const [years, months, weeks, days] = match.slice(1).map((part) => (part === undefined ? 0 : Number(part)));
  return { years: years!, months: months!, weeks: weeks!, days: days! };
}

/** Whether a duration has no length (P0D): no renewal term can be one. */
export function isZero(d: Duration): boolean {
  return d.years === 0 && d.months === 0 && d.weeks === 0 && d.days === 0;
}

function daysInMonth(year: number, month: number): number {
  const last = new Date(0);
  last.setUTCFullYear(year, month, 0);
  return last.getUTCDate();
}

interface Ymd {
  year: number;
  month: number;
  day: number;
}

const toYmd = (date: string): Ymd => ({ year: Number(date.slice(0, 4)), month: Number(date.slice(5, 7)), day: Number(date.slice(8, 10)) });

function fromYmd({ year, month, day }: Ymd): string | undefined {
  if (year < 1 || year > 9999) return undefined;
  return `${String(year).padStart(4, '0')}-${String(month).padStart(2, '0')}-${String(day).padStart(2, '0')}`;
}

/**
 * `date` moved by `factor` times the duration (factor negative to subtract): its months
 * (years as 12) first, the day clamped to the month's last, then its days (weeks as 7).
 * Undefined past the years 1 to 9999.
 */
export function addDuration(date: string, d: Duration, factor = 1): string | undefined {
  const start = toYmd(date);
  const months = start.year * 12 + (start.month - 1) + factor * (d.years * 12 + d.months);
  const year = Math.floor(months / 12);
  const month = (months % 12) + 1;
  if (year < 1 || year > 9999) return undefined;
  const clamped = { year, month, day: Math.min(start.day, daysInMonth(year, month)) };
  const days = factor * (d.weeks * 7 + d.days);
  if (days === 0) return fromYmd(clamped);
  // setUTCFullYear, not Date.UTC: the latter reads the years 0 to 99 as 1900 to 1999.
  const moved = new Date(0);
  moved.setUTCFullYear(clamped.year, clamped.month - 1, clamped.day + days);
  return fromYmd({ year: moved.getUTCFullYear(), month: moved.getUTCMonth() + 1, day: moved.getUTCDate() });
}

/** A duration's length in days, roughly (a month as 30.436875 days): only to guess how many terms have passed. */
const approximateDays = (d: Duration) => (d.years * 12 + d.months) * 30.436875 + d.weeks * 7 + d.days;

const dayNumber = (date: string) => Date.parse(`${date}T00:00:00Z`) / 86_400_000;

/** The first `renewal + k × term` (k ≥ 1) that is `today` or later; undefined past the year 9999. */
export function rollForward(renewal: string, term: Duration, today: string): string | undefined {
  if (isZero(term)) return undefined;
  // Start a little before the guess and step: the guess can be off by a clamped month end.
  let k = Math.max(1, Math.floor((dayNumber(today) - dayNumber(renewal)) / approximateDays(term)) - 1);
  for (;;) {
    const next = addDuration(renewal, term, k);
    if (next === undefined || next >= today) return next;
    k += 1;
  }
}

export interface RenewalFacts {
  renewalDate: string | null;
  autoRenewal: boolean | null;
  renewalTerm: string | null;
  noticePeriod: string | null;
}

export interface RenewalDecision {
  nextRenewalDate: string | null;
  noticeDeadline: string | null;
}

/** The contract's next renewal and notice deadline on `today` (YYYY-MM-DD, UTC). */
export function renewalDecision(facts: RenewalFacts, today: string): RenewalDecision {
  const { renewalDate, autoRenewal } = facts;
  if (renewalDate === null) return { nextRenewalDate: null, noticeDeadline: null };
  const term = facts.renewalTerm === null ? undefined : parseDuration(facts.renewalTerm);
  const rolled = renewalDate < today && autoRenewal === true && term !== undefined ? rollForward(renewalDate, term, today) : undefined;
  const nextRenewalDate = rolled ?? renewalDate;
  const notice = facts.noticePeriod === null ? undefined : parseDuration(facts.noticePeriod);
  const noticeDeadline = autoRenewal === true && notice !== undefined ? (addDuration(nextRenewalDate, notice, -1) ?? null) : null;
  return { nextRenewalDate, noticeDeadline };
}

/** A duration in words ("1 year", "3 months", "90 days", "1 year 6 months"), for people; the text itself when it is not one. */
export function describeDuration(text: string): string {
  const d = parseDuration(text);
  if (!d) return text;
  const part = (n: number, unit: string) => (n === 0 ? [] : [`${n} ${unit}${n === 1 ? '' : 's'}`]);
  return [...part(d.years, 'year'), ...part(d.months, 'month'), ...part(d.weeks, 'week'), ...part(d.days, 'day')].join(' ') || '0 days';
}
