import Papa from 'papaparse';

/** One cell of a CSV record: text, a number, a boolean, or empty. */
export type CsvCell = string | number | boolean | null;

/**
 * RFC 4180 lines (CRLF, quotes doubled). Text cells a spreadsheet would run as a formula
 * get a leading apostrophe (OWASP): those whose first character that is not whitespace is
 * =, +, - or @, and those starting with a tab or CR. Numbers are never touched, so a
 * negative value stays a number.
 */
export function toCsvLines(records: CsvCell[][]): string {
  if (records.length === 0) return '';
  if (records[0]!.length === 1) {
    // With one column, an empty cell would be an empty line, which CSV readers skip (and
    // the row count would no longer match the list's total): it is written as "".
    const rows = records.map((r) => (r[0] === null ? [''] : r));
    return `${Papa.unparse(rows, { newline: '\r\n', escapeFormulae: FORMULA_START, header: false, quotes: (value: unknown) => value === '' })}\r\n`;
  }
  return `${Papa.unparse(records, { newline: '\r\n', escapeFormulae: FORMULA_START, header: false })}\r\n`;
}

// papaparse's own pattern for `escapeFormulae: true` (/^[=+\-@\t\r].*$/) misses text that
// contains a line break, because `.` does not match one, and text whose formula follows
// leading blanks (" =1+1", "\n@SUM(A1)"), which a spreadsheet's import can trim before it
// reads the cell: the first character that is not whitespace decides. `\s` is JavaScript's
// whitespace: spaces, tabs, line breaks, no-break and the other Unicode spaces, U+FEFF.
const FORMULA_START = /^(?:[\t\r]|\s*[=+\-@])/;
