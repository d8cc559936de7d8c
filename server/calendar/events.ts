import type { ContractDetailRow } from '@/db/queries/contracts/columns';
import { DEFAULT_NOTICE_REMINDER_DAYS, FEED_WINDOW_DAYS } from '@/lib/calendar';
import { showsExtractedData } from '@/lib/contracts';
import { describeDuration, renewalDecision } from '@/lib/renewal-dates';
import { addDays, utcToday } from '@/server/dates';
import { allDayEvent, calendarEnd, calendarStart, type AllDayEvent } from './ics';

/**
 * What a calendar feed says about contracts: one all-day event per expiration date, per
 * next renewal (an evergreen contract at its next term, lib/renewal-dates.ts) and per
 * notice deadline, with a reminder the days before it the feed's owner chose. Dates exist only for completed contracts (the API shows extracted
 * data for those alone), and only dates from FEED_WINDOW_DAYS before today onwards are
 * listed: a year of history lets people look back at what just ended, while years of
 * expired contracts would only grow the file that every calendar app fetches again and again.
 */

export interface FeedSettings {
  /** The public origin, for links back to the app. */
  origin: string;
  /** The day the renewal decisions are computed on (UTC). */
  today: string;
  /** The first date listed (YYYY-MM-DD, inclusive). */
  windowStart: string;
  /** Days before a notice deadline its reminder shows (the feed's choice). */
  noticeReminderDays: number;
}

/** `noticeReminderDays`: the feed's choice; a feed made before there was one has the default, two weeks. */
export function feedSettings(origin: string, now: Date, noticeReminderDays: number | null = null): FeedSettings {
  return { origin, today: utcToday(now), windowStart: windowStartOf(now), noticeReminderDays: noticeReminderDays ?? DEFAULT_NOTICE_REMINDER_DAYS };
}

/**
 * An event's UID: the contract's id (a UUID, unique everywhere), what the date is, and the
 * product, never the host the feed was fetched through. A calendar app keys events by
 * UID, so a feed read under another name (a new domain, a proxy) updates the same events
 * instead of doubling them. The renewal's and the notice deadline's stay the same when an
 * evergreen contract rolls to its next term: the event moves to the new date.
 */
export function eventUid(contractId: string, date: 'expiration' | 'renewal' | 'notice'): string {
  return `${contractId}-${date}@contract-data-api`;
}

/** Today in UTC, minus FEED_WINDOW_DAYS days. */
export function windowStartOf(now: Date): string {
  return addDays(utcToday(now), -FEED_WINDOW_DAYS);
}

export function feedHeader(): string {
  return calendarStart({
    productId: '-//Contract Data//Contract renewals calendar//EN',
    name: 'Contracts',
    description: 'Renewal, expiration and notice dates of your contracts and those of your organisations.',
    refreshInterval: 'PT6H',
  });
}

export function feedFooter(): string {
  return calendarEnd();
}

const numbers = new Intl.NumberFormat('en-US', { maximumFractionDigits: 2 });
const withCents = new Intl.NumberFormat('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 });

/** "18,000 USD", "950.50 EUR": grouping for reading, the code rather than a symbol ($ is several currencies). */
function formatValue(value: number | null, currency: string | null): string | undefined {
  if (value === null) return currency ?? undefined;
  const amount = Number.isInteger(value) ? numbers.format(value) : withCents.format(value);
  return currency ? `${amount} ${currency}` : amount;
}

function description(row: ContractDetailRow, url: string): string {
  const value = formatValue(row.contractValue, row.currency);
  return [
    row.provider !== null ? `Provider: ${row.provider}` : undefined,
    row.client !== null ? `Client: ${row.client}` : undefined,
    value !== undefined ? `Value: ${value}` : undefined,
    // Google Calendar ignores the URL property: the link is in the text too.
    `Contract: ${url}`,
  ]
    .filter((line): line is string => line !== undefined)
    .join('\n');
}

/** What giving notice by the deadline stops, in words: "Notice stops the renewal on 2027-03-01, which would start another term of 1 year. Notice period: 90 days." */
function noticeLines(row: ContractDetailRow, nextRenewal: string): string[] {
  const term = row.renewalTerm !== null ? `, which would start another term of ${describeDuration(row.renewalTerm)}` : '';
  return [`Notice stops the renewal on ${nextRenewal}${term}.`, `Notice period: ${describeDuration(row.noticePeriod!)}`];
}

/** The events of one contract, in a fixed order (expiration, renewal, notice deadline). */
export function contractEvents(row: ContractDetailRow, settings: FeedSettings): AllDayEvent[] {
  if (!showsExtractedData(row.status)) return [];
  const url = `${settings.origin}/contracts/${row.id}`;
  const common = { stamp: row.updatedAt, description: description(row, url), url };
  const events: AllDayEvent[] = [];
  if (row.expirationDate !== null && row.expirationDate >= settings.windowStart) {
    events.push({ ...common, uid: eventUid(row.id, 'expiration'), date: row.expirationDate, summary: `Expires: ${row.title}` });
  }
  const { nextRenewalDate, noticeDeadline } = renewalDecision(row, settings.today);
  if (nextRenewalDate !== null && nextRenewalDate >= settings.windowStart) {
    const summary = row.autoRenewal === true ? `Renews automatically: ${row.title}` : `Renews: ${row.title}`;
    events.push({ ...common, uid: eventUid(row.id, 'renewal'), date: nextRenewalDate, summary });
  }
  if (noticeDeadline !== null && noticeDeadline >= settings.windowStart) {
    events.push({
      ...common,
      uid: eventUid(row.id, 'notice'),
      date: noticeDeadline,
      summary: `Give notice by: ${row.title}`,
      description: [...noticeLines(row, nextRenewalDate!), common.description].join('\n'),
      alarmDaysBefore: settings.noticeReminderDays,
    });
  }
  return events;
}

/** The VEVENTs of a page of contracts, as text ('' when none of them has a date in the window). */
export function eventsText(rows: readonly ContractDetailRow[], settings: FeedSettings): string {
  let text = '';
  for (const row of rows) for (const event of contractEvents(row, settings)) text += allDayEvent(event);
  return text;
}
