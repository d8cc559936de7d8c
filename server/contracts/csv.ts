import Papa from 'papaparse';
import { cellWriter, EXPORT_COLUMNS, type Cell, type ContractDetail, type ExportColumn } from './shape';

/**
 * RFC 4180 lines (CRLF, quotes doubled). Text cells a spreadsheet would run as a formula
 * get a leading apostrophe (OWASP): those whose first character that is not whitespace is
 * =, +, - or @, and those starting with a tab or CR. Numbers are never touched, so a
 * negative value stays a number.
 */
export function toCsvLines(records: Cell[][]): string {
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

export function csvHeaderLine(columns: readonly ExportColumn[] = EXPORT_COLUMNS): string {
  return toCsvLines([[...columns]]);
}

/**
 * How timestamps are written. `iso`: as the JSON API writes them (2026-09-29T10:00:00.000Z),
 * which every CSV library and script reads, but Excel leaves as text. `excel`: the same
 * instant in UTC as 2026-09-29 10:00:00, which Excel (and LibreOffice) read as a date and
 * time in every locale, and most scripts still parse (Python's datetime.fromisoformat).
 * Dates (YYYY-MM-DD) need no such form: Excel reads them in every locale.
 */
export const DATE_FORMATS = ['iso', 'excel'] as const;
export type DateFormat = (typeof DATE_FORMATS)[number];

const excelTimestamp = (iso: string) => `${iso.slice(0, 10)} ${iso.slice(11, 19)}`;

/** The CSV lines of contracts, in the chosen columns and order (the API's detail, flattened). */
export function csvLinesWriter(
  columns: readonly ExportColumn[] = EXPORT_COLUMNS,
  dateFormat: DateFormat = 'iso',
): (details: readonly ContractDetail[]) => string {
  const cells = cellWriter(columns, dateFormat === 'excel' ? excelTimestamp : undefined);
  return (details) => toCsvLines(details.map(cells));
}

/** The UTF-8 byte order mark: Excel reads a CSV as UTF-8 only when the file starts with it. */
export const UTF8_BOM = '\uFEFF';
