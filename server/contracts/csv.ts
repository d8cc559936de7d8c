import { toCsvLines } from '@/server/csv';
import { cellWriter, EXPORT_COLUMNS, type ContractDetail, type ExportColumn } from './shape';

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

/**
 * The export's formats: `csv`, the detail flattened for spreadsheets and scripts; `ndjson`,
 * one get-one detail per line, for programs that keep an exact copy (no formula guard,
 * no empty cell standing for both null and "").
 */
export const EXPORT_FORMATS = ['csv', 'ndjson'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

/** The UTF-8 byte order mark: Excel reads a CSV as UTF-8 only when the file starts with it. */
export const UTF8_BOM = '\uFEFF';
