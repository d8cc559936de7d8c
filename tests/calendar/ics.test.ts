import ICAL from 'ical.js';
import { describe, expect, it } from 'vitest';
import { addDays } from '@/server/dates';
import {
  allDayEvent,
  calendarEnd,
  calendarStart,
  contentLine,
  escapeText,
  foldLine,
  icsDate,
  icsDateTime,
  textLine,
} from '@/server/calendar/ics';

const octets = (text: string) => Buffer.byteLength(text, 'utf8');
/** RFC 5545 3.1 unfolding: a CRLF followed by one space or tab is removed. */
const unfold = (text: string) => text.replace(/\r\n[ \t]/g, '');
/** Each physical line decoded strictly: a split UTF-8 sequence would throw. */
const strictDecode = (line: string) => new TextDecoder('utf-8', { fatal: true }).decode(Buffer.from(line, 'utf8'));

describe('escapeText (RFC 5545 3.3.11)', () => {
  it('escapes backslash, semicolon and comma, and writes line breaks as \\n', () => {
    expect(escapeText('a\\b;c,d')).toBe('a\\\\b\\;c\\,d');
    expect(escapeText('one\ntwo\r\nthree\rfour')).toBe('one\\ntwo\\nthree\\nfour');
    // A backslash before an n stays a literal backslash, not a line break.
    expect(escapeText('C:\\new')).toBe('C:\\\\new');
  });

  it('drops control characters other than line breaks and keeps tabs, colons, quotes and non-ASCII text', () => {
    expect(escapeText('a\u0000b\u0007c\u001bd\u007fe\u000bf\u000cg')).toBe('abcdefg');
    expect(escapeText('tab\there')).toBe('tab\there');
    expect(escapeText('Say "hi": Zürich — 東京 🚀')).toBe('Say "hi": Zürich — 東京 🚀');
  });

  it('replaces a lone surrogate (no UTF-8 form) with U+FFFD', () => {
    expect(escapeText('a\uD83Db')).toBe('a\uFFFDb');
    expect(escapeText('a\uDE80b')).toBe('a\uFFFDb');
    expect(escapeText('\uD83D\uDE80')).toBe('🚀');
  });
});

describe('foldLine (RFC 5545 3.1)', () => {
  it('leaves a line of exactly 75 octets alone and folds one of 76', () => {
    const exact = `X:${'a'.repeat(73)}`;
    expect(foldLine(exact)).toBe(exact);
    const over = `X:${'a'.repeat(74)}`;
    expect(foldLine(over)).toBe(`X:${'a'.repeat(73)}\r\n a`);
  });

  it('keeps every physical line within 75 octets, the leading space included, and unfolds to the original', () => {
    for (const length of [76, 149, 150, 151, 1000]) {
      const line = `DESCRIPTION:${'x'.repeat(length)}`;
      const folded = foldLine(line);
      const physical = folded.split('\r\n');
      for (const part of physical) expect(octets(part)).toBeLessThanOrEqual(75);
      for (const part of physical.slice(1)) expect(part.startsWith(' ')).toBe(true);
      // Every line but the last is full: folding wastes no room.
      for (const part of physical.slice(0, -1)) expect(octets(part)).toBe(75);
      expect(unfold(folded)).toBe(line);
    }
  });

  it.each([
    ['é (2 octets)', 'é'],
    ['€ (3 octets)', '€'],
    ['東 (3 octets)', '東'],
    ['🚀 (4 octets, a surrogate pair in UTF-16)', '🚀'],
  ])('never splits %s across lines, whatever its offset', (_label, char) => {
    for (let offset = 0; offset < 8; offset++) {
      const line = `SUMMARY:${'a'.repeat(offset)}${char.repeat(60)}`;
      const folded = foldLine(line);
      const physical = folded.split('\r\n');
      expect(physical.length).toBeGreaterThan(1);
      for (const part of physical) {
        expect(octets(part)).toBeLessThanOrEqual(75);
        expect(() => strictDecode(part)).not.toThrow();
        // Cut at a character boundary: each piece is whole characters of the original.
        expect([...part.replace(/^ /, '')].every((c) => c === char || c === 'a' || ':SUMMARY'.includes(c))).toBe(true);
      }
      // A line ends early only when the next character would not fit.
      for (let i = 0; i < physical.length - 1; i++) expect(octets(physical[i]!) + octets(char)).toBeGreaterThan(75);
      expect(unfold(folded)).toBe(line);
    }
  });

  it('moves a multi-octet character that would straddle octet 75 to the next line', () => {
    const line = `X:${'a'.repeat(72)}€b`; // 2 + 72 + 3 = 77 octets before "b"
    expect(foldLine(line)).toBe(`X:${'a'.repeat(72)}\r\n €b`);
  });
});

describe('content lines and values', () => {
  it('ends every content line with CRLF, folded', () => {
    expect(contentLine('VERSION', '2.0')).toBe('VERSION:2.0\r\n');
    const long = textLine('SUMMARY', 'ü'.repeat(100));
    expect(long.endsWith('\r\n')).toBe(true);
    expect(long.split('\r\n').slice(0, -1).every((l) => octets(l) <= 75)).toBe(true);
    expect(long.replace(/\r\n/g, '')).not.toMatch(/[\r\n]/);
  });

  it('writes DATE and UTC DATE-TIME values and moves dates across month, year and leap days', () => {
    expect(icsDate('2027-03-31')).toBe('20270331');
    expect(icsDateTime(new Date('2026-10-01T10:00:00.123Z'))).toBe('20261001T100000Z');
    expect(addDays('2026-12-31', 1)).toBe('2027-01-01');
    expect(addDays('2028-02-28', 1)).toBe('2028-02-29');
    expect(addDays('2027-02-28', 1)).toBe('2027-03-01');
    expect(addDays('2026-11-22', -365)).toBe('2025-11-22');
    expect(addDays('2029-03-01', -365)).toBe('2028-03-01');
    expect(() => icsDate('2027-02-30')).toThrow();
    expect(() => icsDate('20270330')).toThrow();
  });

  it('writes an all-day event that ical.js reads back exactly, with DTEND the next day', () => {
    const summary = 'Renews: Lease; "Büro", Zürich\nFloor 2 \\ 東京 🚀 ' + 'long '.repeat(20);
    const description = 'Provider: A, B; C\nClient: D\\E';
    const text =
      calendarStart({ productId: '-//Test, Inc.//Test//EN', name: 'Contracts, mine', refreshInterval: 'PT6H' }) +
      allDayEvent({
        uid: 'abc-renewal@example.com',
        stamp: new Date('2026-10-01T10:00:00.000Z'),
        date: '2026-12-31',
        summary,
        description,
        url: 'https://example.com/contracts/abc',
      }) +
      calendarEnd();
    expect(text.replace(/\r\n/g, '')).not.toMatch(/[\r\n]/);
    expect(text.endsWith('END:VCALENDAR\r\n')).toBe(true);
    for (const line of text.split('\r\n')) expect(octets(line)).toBeLessThanOrEqual(75);

    const calendar = new ICAL.Component(ICAL.parse(text));
    expect(calendar.getFirstPropertyValue('prodid')).toBe('-//Test, Inc.//Test//EN');
    // NAME (RFC 7986) and X- properties are TEXT too, but ical.js does not know them and
    // leaves their escapes alone: checked as written.
    expect(text).toContain('\r\nNAME:Contracts\\, mine\r\nX-WR-CALNAME:Contracts\\, mine\r\n');
    expect(String(calendar.getFirstPropertyValue('refresh-interval'))).toBe('PT6H');
    const [vevent] = calendar.getAllSubcomponents('vevent');
    const event = new ICAL.Event(vevent);
    expect(event.uid).toBe('abc-renewal@example.com');
    expect(event.summary).toBe(summary);
    expect(event.description).toBe(description);
    expect(event.startDate.isDate).toBe(true);
    expect(event.startDate.toString()).toBe('2026-12-31');
    expect(event.endDate.toString()).toBe('2027-01-01');
    expect((vevent!.getFirstPropertyValue('dtstamp') as ICAL.Time).toJSDate().toISOString()).toBe('2026-10-01T10:00:00.000Z');
    expect(vevent!.getFirstPropertyValue('url')).toBe('https://example.com/contracts/abc');
  });

  it('writes 9999-12-31 (an "open-ended" date) without DTEND: still a one-day event, never an error', () => {
    const text =
      calendarStart({ productId: '-//Test//EN', name: 'Contracts', refreshInterval: 'PT6H' }) +
      allDayEvent({ uid: 'x-expiration@example.com', stamp: new Date('2026-10-01T10:00:00.000Z'), date: '9999-12-31', summary: 'Expires: forever' }) +
      calendarEnd();
    expect(text).not.toContain('DTEND');
    const event = new ICAL.Event(new ICAL.Component(ICAL.parse(text)).getFirstSubcomponent('vevent')!);
    expect(event.startDate.toString()).toBe('9999-12-31');
    expect(event.startDate.isDate).toBe(true);
  });
});
