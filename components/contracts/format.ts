import type { ContractStatus, SortValue } from '@/lib/contracts';

/**
 * Labels and formats shared by the contracts pages and the chart (server and client).
 * Dates are formatted in UTC: the API's dates are calendar dates and its "today" is UTC,
 * so a viewer's time zone must not move a contract to another day.
 */

const LOCALE = 'en-GB';

export const STATUS_LABELS: Record<ContractStatus, string> = {
  pending: 'Pending',
  processing: 'Processing',
  completed: 'Completed',
  failed: 'Failed',
};

/** Readable labels of the API's 12 sort values, grouped as the sort select shows them. */
export const SORT_GROUPS: { label: string; options: { value: SortValue; label: string }[] }[] = [
  {
    label: 'Upload date',
    options: [
      { value: '-created_at', label: 'Newest uploads first' },
      { value: 'created_at', label: 'Oldest uploads first' },
    ],
  },
  {
    label: 'Last update',
    options: [
      { value: '-updated_at', label: 'Recently updated first' },
      { value: 'updated_at', label: 'Least recently updated first' },
    ],
  },
  {
    label: 'Expiration date',
    options: [
      { value: 'expiration_date', label: 'Expiring soonest first' },
      { value: '-expiration_date', label: 'Expiring latest first' },
    ],
  },
  {
    label: 'Next renewal',
    options: [
      { value: 'next_renewal_date', label: 'Next renewal soonest first' },
      { value: '-next_renewal_date', label: 'Next renewal latest first' },
    ],
  },
  {
    label: 'Notice deadline',
    options: [
      { value: 'notice_deadline', label: 'Notice deadline soonest first' },
      { value: '-notice_deadline', label: 'Notice deadline latest first' },
    ],
  },
  {
    label: 'Renewal date (as extracted)',
    options: [
      { value: 'renewal_date', label: 'Renewing soonest first' },
      { value: '-renewal_date', label: 'Renewing latest first' },
    ],
  },
  {
    label: 'Contract value',
    options: [
      { value: '-contract_value', label: 'Highest value first' },
      { value: 'contract_value', label: 'Lowest value first' },
    ],
  },
  {
    label: 'Title',
    options: [
      { value: 'title', label: 'Title A to Z' },
      { value: '-title', label: 'Title Z to A' },
    ],
  },
];

export const SORT_LABELS = Object.fromEntries(SORT_GROUPS.flatMap((g) => g.options.map((o) => [o.value, o.label]))) as Record<
  SortValue,
  string
>;

const dateFormat = new Intl.DateTimeFormat(LOCALE, { day: 'numeric', month: 'short', year: 'numeric', timeZone: 'UTC' });
const dateTimeFormat = new Intl.DateTimeFormat(LOCALE, {
  day: 'numeric',
  month: 'short',
  year: 'numeric',
  hour: '2-digit',
  minute: '2-digit',
  timeZone: 'UTC',
  timeZoneName: 'short',
});
const monthFormat = new Intl.DateTimeFormat(LOCALE, { month: 'long', year: 'numeric', timeZone: 'UTC' });
const shortMonthFormat = new Intl.DateTimeFormat(LOCALE, { month: 'short', timeZone: 'UTC' });

/** "31 Mar 2027" from YYYY-MM-DD or an ISO timestamp. */
export function formatDate(value: string): string {
  return dateFormat.format(new Date(value.length === 10 ? `${value}T00:00:00Z` : value));
}

/** "1 Nov 2026, 09:00 UTC" from an ISO timestamp. */
export function formatDateTime(value: string | Date): string {
  return dateTimeFormat.format(typeof value === 'string' ? new Date(value) : value);
}

/** "November 2026" from YYYY-MM. */
export function formatMonth(month: string): string {
  return monthFormat.format(new Date(`${month}-01T00:00:00Z`));
}

/** "Nov", or "Jan 27" for January, so that an axis shows where the year changes. */
export function formatAxisMonth(month: string): string {
  const label = shortMonthFormat.format(new Date(`${month}-01T00:00:00Z`));
  return month.endsWith('-01') ? `${label} ${month.slice(2, 4)}` : label;
}

const moneyFormats = new Map<string, Intl.NumberFormat>();
/**
 * "USD 18,000" or "EUR 950.50": the currency's code rather than a symbol, because a list
 * mixes currencies and "$" alone does not say which dollar. Cents only when there are any.
 */
export function formatMoney(value: number, currency: string | null, options: { compact?: boolean } = {}): string {
  const whole = Number.isInteger(value);
  const key = `${currency ?? '-'}|${whole}|${options.compact === true}`;
  let format = moneyFormats.get(key);
  if (!format) {
    const compact: Intl.NumberFormatOptions = options.compact ? { notation: 'compact', maximumFractionDigits: 1 } : {};
    format = new Intl.NumberFormat(LOCALE, {
      ...(currency ? { style: 'currency', currency, currencyDisplay: 'code' } : {}),
      minimumFractionDigits: whole || options.compact ? 0 : 2,
      maximumFractionDigits: whole ? 0 : 2,
      ...compact,
    });
    moneyFormats.set(key, format);
  }
  return format.format(value);
}

const currencyNames = new Intl.DisplayNames(LOCALE, { type: 'currency' });
/** "US Dollar" for USD; the code itself for a code Intl does not know. */
export function currencyName(code: string): string {
  try {
    return currencyNames.of(code) ?? code;
  } catch {
    return code;
  }
}

const relative = new Intl.RelativeTimeFormat(LOCALE, { numeric: 'auto' });
/** "in 9 days", "today", "3 days ago" for a date within `days` of today; undefined otherwise. */
export function relativeDays(date: string, today: string, days = 90): string | undefined {
  const diff = Math.round((Date.parse(`${date}T00:00:00Z`) - Date.parse(`${today}T00:00:00Z`)) / 86_400_000);
  return Math.abs(diff) <= days ? relative.format(diff, 'day') : undefined;
}

/** "1.0 MB", "240 KB", "0 B". */
export function formatFileSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${Math.round(bytes / 1024)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}
