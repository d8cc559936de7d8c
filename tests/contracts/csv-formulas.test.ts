import Papa from 'papaparse';
import { describe, expect, it } from 'vitest';
import { toCsvLines } from '@/server/csv';

// OWASP CSV injection: a text cell a spreadsheet would run as a formula gets a leading
// apostrophe. A spreadsheet's import can trim leading blanks, so the first character that
// is not whitespace decides, not the first character.
const cellOf = (value: string | number) => Papa.parse<string[]>(toCsvLines([[value, 'x']]).trimEnd()).data[0]![0]!;

describe('CSV formula neutralisation', () => {
  const starts = ['=', '+', '-', '@'];
  const blanks = ['', ' ', '   ', '\t', '\n', '\r\n', ' \t\n ', '\u00a0', '\u2003', '\u3000', '\ufeff', '\v', '\f'];

  it.each(starts.flatMap((start) => blanks.map((blank) => [JSON.stringify(blank), start, `${blank}${start}HYPERLINK("http://evil.example")`] as const)))(
    'neutralises %s before %s',
    (_label, _start, text) => {
      expect(cellOf(text)).toBe(`'${text}`);
    },
  );

  it('still neutralises cells that start with a tab or CR, whatever follows', () => {
    expect(cellOf('\tplain')).toBe("'\tplain");
    expect(cellOf('\rplain')).toBe("'\rplain");
  });

  it.each(['plain', ' plain', '\nplain', 'a=b', ' 1-2', 'e-mail@example.com', '', ' '])('leaves %j alone', (text) => {
    expect(cellOf(text)).toBe(text);
  });

  it('never touches numbers', () => {
    expect(cellOf(-950.5)).toBe('-950.5');
  });
});
