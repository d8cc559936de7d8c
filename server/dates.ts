/** Calendar dates as the API writes them (YYYY-MM-DD, UTC), shared by the filters, the chart and the calendar feed. */

/** Today's date in UTC, YYYY-MM-DD: "within N days" counts from it. */
export function utcToday(now: Date = new Date()): string {
  return now.toISOString().slice(0, 10);
}

/**
 * A YYYY-MM-DD date moved by whole days (calendar arithmetic in UTC, no time zone drift).
 * Past the years 0001 to 9999 the result is Postgres's 'infinity' or '-infinity', which
 * compare beyond every date: "after 9999-12-31" then matches nothing instead of failing.
 */
export function addDays(date: string, days: number): string {
  const d = new Date(`${date}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() + days);
  const year = d.getUTCFullYear();
  if (year > 9999) return 'infinity';
  if (year < 1) return '-infinity';
  return d.toISOString().slice(0, 10);
}
