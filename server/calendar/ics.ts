import { addDays } from '@/server/dates';
/**
 * An RFC 5545 (iCalendar) writer: pure functions from values to text, no I/O. Every
 * content line ends with CRLF and is folded at 75 octets of UTF-8 (3.1); TEXT values are
 * escaped (3.3.11). What it writes is what the feed streams, a few lines at a time.
 */

const CRLF = '\r\n';
/** RFC 5545 3.1: "Lines of text SHOULD NOT be longer than 75 octets, excluding the line break." */
const MAX_LINE_OCTETS = 75;

// RFC 5545 3.1 CONTROL (%x00-08 / %x0A-1F / %x7F): not allowed in any value. Line breaks
// in TEXT are escaped as \n before this runs; HTAB is allowed in TEXT (WSP) and kept.
const TEXT_CONTROL = /[\u0000-\u0008\u000A-\u001F\u007F]/g;
// Other value types (dates, URIs, durations) allow no control character at all.
const ANY_CONTROL = /[\u0000-\u001F\u007F]/g;
// A lone UTF-16 surrogate has no UTF-8 form; TextEncoder would write U+FFFD for it, so the
// octet count of folding must see the same character.
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/** A TEXT value: backslash, semicolon, comma and line breaks escaped, other controls dropped. */
export function escapeText(text: string): string {
  return text
    .replace(LONE_SURROGATE, '\uFFFD')
    .replace(/\r\n?/g, '\n')
    .replace(/[\\;,\n]/g, (c) => (c === '\n' ? '\\n' : `\\${c}`))
    .replace(TEXT_CONTROL, '');
}

/** A value of another type (date, URI, duration): written as is, minus control characters. */
function plainValue(value: string): string {
  return value.replace(LONE_SURROGATE, '\uFFFD').replace(ANY_CONTROL, '');
}

function utf8Length(codePoint: number): number {
  if (codePoint < 0x80) return 1;
  if (codePoint < 0x800) return 2;
  if (codePoint < 0x10000) return 3;
  return 4;
}

/**
 * Folds one content line (without its CRLF) into physical lines of at most 75 octets:
 * each continuation starts with one space, which counts towards its 75. Lines are split
 * between characters (code points), never inside a multi-octet UTF-8 sequence.
 */
export function foldLine(line: string): string {
  if (line.length <= MAX_LINE_OCTETS && Buffer.byteLength(line, 'utf8') <= MAX_LINE_OCTETS) return line;
  const parts: string[] = [];
  let current = '';
  let octets = 0;
  for (const char of line) {
    const size = utf8Length(char.codePointAt(0)!);
    if (octets + size > MAX_LINE_OCTETS) {
      parts.push(current);
      current = ' ';
      octets = 1;
    }
    current += char;
    octets += size;
  }
  parts.push(current);
  return parts.join(CRLF);
}

/** One property as a folded content line with its CRLF. `name` may carry parameters ("DTSTART;VALUE=DATE"). */
export function contentLine(name: string, value: string): string {
  return `${foldLine(`${name}:${value}`)}${CRLF}`;
}

/** A TEXT property. */
export function textLine(name: string, text: string): string {
  return contentLine(name, escapeText(text));
}

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const LAST_DATE = '9999-12-31';

function parseDate(date: string): Date {
  const m = DATE.exec(date);
  const parsed = m ? new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]))) : undefined;
  // Round-tripping rejects dates that Date.UTC would roll over (2027-02-30).
  if (!parsed || parsed.toISOString().slice(0, 10) !== date) throw new Error(`not a calendar date: ${JSON.stringify(date)}`);
  return parsed;
}

/** DATE value (3.3.4): 2027-03-31 -> 20270331. */
export function icsDate(date: string): string {
  parseDate(date);
  return date.replaceAll('-', '');
}

/** DATE-TIME value in UTC (3.3.5, form 2): 20270331T093000Z. */
export function icsDateTime(instant: Date): string {
  return instant.toISOString().replace(/\.\d{3}Z$/, 'Z').replace(/[-:]/g, '');
}

export interface CalendarProperties {
  /** PRODID: who wrote the calendar. */
  productId: string;
  /** Shown by calendar apps as the calendar's name (NAME, X-WR-CALNAME). */
  name: string;
  description?: string;
  /** How often subscribers should fetch it again, as a DURATION (REFRESH-INTERVAL, X-PUBLISHED-TTL). */
  refreshInterval: string;
}

/**
 * The calendar's opening lines. No METHOD: this is a published calendar, not an iTIP
 * message, so DTSTAMP means "when this event last changed" (RFC 5545 3.8.7.2).
 */
export function calendarStart(calendar: CalendarProperties): string {
  return [
    contentLine('BEGIN', 'VCALENDAR'),
    contentLine('VERSION', '2.0'),
    textLine('PRODID', calendar.productId),
    contentLine('CALSCALE', 'GREGORIAN'),
    textLine('NAME', calendar.name),
    textLine('X-WR-CALNAME', calendar.name),
    ...(calendar.description ? [textLine('X-WR-CALDESC', calendar.description)] : []),
    // RFC 7986 5.7, and the older name that Outlook and Google Calendar read.
    contentLine('REFRESH-INTERVAL;VALUE=DURATION', plainValue(calendar.refreshInterval)),
    contentLine('X-PUBLISHED-TTL', plainValue(calendar.refreshInterval)),
  ].join('');
}

export function calendarEnd(): string {
  return contentLine('END', 'VCALENDAR');
}

export interface AllDayEvent {
  /** Globally unique and stable across fetches, so that apps update the event instead of duplicating it. */
  uid: string;
  /** When the event's information last changed. */
  stamp: Date;
  /** YYYY-MM-DD. */
  date: string;
  summary: string;
  description?: string;
  url?: string;
  /** A reminder this many days before the day (a VALARM that shows `summary`). */
  alarmDaysBefore?: number;
}

/**
 * One all-day VEVENT: DTSTART is the day, DTEND the next day (exclusive, RFC 5545 3.6.1).
 * 9999-12-31, a common "open-ended" date, has no next day in four digits: its DTEND is
 * left out, which RFC 5545 reads as the same one-day event.
 */
export function allDayEvent(event: AllDayEvent): string {
  return [
    contentLine('BEGIN', 'VEVENT'),
    textLine('UID', event.uid),
    contentLine('DTSTAMP', icsDateTime(event.stamp)),
    contentLine('LAST-MODIFIED', icsDateTime(event.stamp)),
    contentLine('DTSTART;VALUE=DATE', icsDate(event.date)),
    ...(event.date < LAST_DATE ? [contentLine('DTEND;VALUE=DATE', icsDate(addDays(event.date, 1)))] : []),
    textLine('SUMMARY', event.summary),
    ...(event.description ? [textLine('DESCRIPTION', event.description)] : []),
    ...(event.url ? [contentLine('URL', plainValue(event.url))] : []),
    // A date to remember, not time taken: it does not make anyone look busy.
    contentLine('TRANSP', 'TRANSPARENT'),
    // RFC 5545 3.6.6: a display alarm, its trigger relative to the start of the day.
    ...(event.alarmDaysBefore !== undefined
      ? [
          contentLine('BEGIN', 'VALARM'),
          contentLine('ACTION', 'DISPLAY'),
          textLine('DESCRIPTION', event.summary),
          contentLine('TRIGGER', event.alarmDaysBefore === 0 ? 'PT0S' : `-P${event.alarmDaysBefore}D`),
          contentLine('END', 'VALARM'),
        ]
      : []),
    contentLine('END', 'VEVENT'),
  ].join('');
}
