import type { Database } from '@/db/client';
import { selectContractTimeline } from '@/db/queries/contracts/timeline';
import { assertMemberOf, type CallerScope } from '@/server/access/scope';
import { utcToday } from '@/server/dates';

/**
 * The contracts page's chart: upcoming renewals (next renewals), expirations and notice
 * deadlines, month by month, with the renewing and expiring contract value per currency
 * (a deadline is a decision, not money of its own). Every month of the window is present (zeros
 * where nothing happens), so the chart's axis never skips a month. "Upcoming" means from
 * today on: the current month counts only its days from today, never a date already past.
 */

export const TIMELINE_MONTHS = 12;

export interface TimelineMonth {
  /** YYYY-MM */
  month: string;
  renewals: number;
  expirations: number;
  /** Notice deadlines that month: the last days notice stops a renewal. */
  notices: number;
}

export interface CurrencyMonth {
  /** YYYY-MM */
  month: string;
  /** Summed value of the contracts renewing that month, in this currency. */
  renewing: number;
  /** Summed value of the contracts expiring that month, in this currency. */
  expiring: number;
}

export interface CurrencyTimeline {
  /** ISO 4217 code. */
  currency: string;
  months: CurrencyMonth[];
  totalRenewing: number;
  totalExpiring: number;
}

export interface ContractTimeline {
  /** First day of the window: today (UTC), YYYY-MM-DD. */
  from: string;
  /** First day after the window, YYYY-MM-DD. */
  to: string;
  months: TimelineMonth[];
  /** One series per currency, by code; currencies are never added together. */
  currencies: CurrencyTimeline[];
  totalRenewals: number;
  totalExpirations: number;
  totalNotices: number;
  /** Renewals and expirations counted above whose contract states no value or no currency. */
  withoutValue: number;
}

/** The first day of the month `months` after the month of `date` (YYYY-MM-DD), in UTC. */
export function monthStart(date: string, months = 0): string {
  const [year, month] = date.split('-').map(Number) as [number, number];
  return new Date(Date.UTC(year, month - 1 + months, 1)).toISOString().slice(0, 10);
}

/** The YYYY-MM of each month of the window. */
export function timelineMonths(today: string, count = TIMELINE_MONTHS): string[] {
  return Array.from({ length: count }, (_, i) => monthStart(today, i).slice(0, 7));
}

/**
 * The timeline of the caller's contracts from today to the end of the 12th month starting
 * with today's month (UTC), optionally of one organisation only. `today` is a parameter so
 * that tests and callers in other contexts decide what "now" is.
 */
export async function contractTimeline(
  db: Database,
  scope: CallerScope,
  options: { organizationId?: string; today?: string } = {},
): Promise<ContractTimeline> {
  // The same membership rule (and the same 403) as the list's organisation filter.
  assertMemberOf(scope, options.organizationId);
  const today = options.today ?? utcToday();
  // From today, not from the first of the month: a renewal earlier this month is past.
  const from = today;
  const to = monthStart(today, TIMELINE_MONTHS);
  const rows = await selectContractTimeline(db, scope, { from, to, organizationId: options.organizationId });

  const months = new Map(timelineMonths(today).map((month) => [month, { month, renewals: 0, expirations: 0, notices: 0 }]));
  const byCurrency = new Map<string, Map<string, CurrencyMonth>>();
  let withoutValue = 0;
  for (const row of rows) {
    const month = months.get(row.month);
    // The statement's date range and the month list are built from the same bounds.
    if (!month) throw new Error(`timeline row outside the window: ${row.month}`);
    if (row.kind === 'notice') {
      month.notices += row.count;
      continue;
    }
    if (row.kind === 'renewal') month.renewals += row.count;
    else month.expirations += row.count;
    // A value without its currency cannot be placed in any currency's series.
    const priced = row.currency === null ? 0 : row.valued;
    withoutValue += row.count - priced;
    if (row.currency === null || row.total === null) continue;
    let series = byCurrency.get(row.currency);
    if (!series) {
      series = new Map(timelineMonths(today).map((m) => [m, { month: m, renewing: 0, expiring: 0 }]));
      byCurrency.set(row.currency, series);
    }
    const point = series.get(row.month)!;
    if (row.kind === 'renewal') point.renewing = Number(row.total);
    else point.expiring = Number(row.total);
  }

  const monthList = [...months.values()];
  const currencies = [...byCurrency.entries()]
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([currency, series]) => {
      const list = [...series.values()];
      return {
        currency,
        months: list,
        totalRenewing: sumOf(list.map((m) => m.renewing)),
        totalExpiring: sumOf(list.map((m) => m.expiring)),
      };
    });
  return {
    from,
    to,
    months: monthList,
    currencies,
    totalRenewals: monthList.reduce((n, m) => n + m.renewals, 0),
    totalExpirations: monthList.reduce((n, m) => n + m.expirations, 0),
    totalNotices: monthList.reduce((n, m) => n + m.notices, 0),
    withoutValue,
  };
}

/**
 * A sum of amounts with at most two decimals, added in cents so that 0.1 + 0.2 is 0.3.
 * Exact while the total stays below about 90 trillion; beyond that it is off by cents,
 * which no chart or rounded label can show.
 */
function sumOf(amounts: number[]): number {
  return amounts.reduce((cents, a) => cents + Math.round(a * 100), 0) / 100;
}
