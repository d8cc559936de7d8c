import Papa from 'papaparse';
import type { ContractDetailRow } from '@/db/queries/contracts';
import { EXPORT_COLUMNS, type ExportColumn } from './schemas';

type Cell = string | number | boolean | null;

/**
 * One contract as an export row, in the documented column order: the same values as the
 * API's detail (extracted fields only once completed). Written out field by field, without
 * object spreads: this runs once per exported row and dominated the export's CPU.
 */
export function toCsvRecord(row: ContractDetailRow): Cell[] {
  const done = row.status === 'completed';
  return [
    row.id,
    row.title,
    row.status,
    row.fileName,
    row.fileSize,
    row.createdAt.toISOString(),
    row.updatedAt.toISOString(),
    row.organizationId,
    done ? row.expirationDate : null,
    done ? row.renewalDate : null,
    done ? row.autoRenewal : null,
    done ? row.contractValue : null,
    done ? row.currency : null,
    done ? row.provider : null,
    done ? row.client : null,
    done ? row.summary : null,
    done ? row.confidenceScore : null,
  ];
}

/**
 * RFC 4180 lines (CRLF, quotes doubled). Text cells a spreadsheet would run as a formula
 * (starting with =, +, -, @, tab or CR) get a leading apostrophe (OWASP); numbers are
 * never touched, so a negative value stays a number.
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
// contains a line break, because `.` does not match one: test the first character only.
const FORMULA_START = /^[=+\-@\t\r]/;

export function csvHeaderLine(columns: readonly ExportColumn[] = EXPORT_COLUMNS): string {
  return toCsvLines([[...columns]]);
}

/**
 * The record of a row in the chosen columns and order: the full record picked by index,
 * so a subset costs one array per row and the default order none at all.
 */
export function csvRecordWriter(columns: readonly ExportColumn[] = EXPORT_COLUMNS): (row: ContractDetailRow) => Cell[] {
  const isDefault = columns.length === EXPORT_COLUMNS.length && columns.every((c, i) => c === EXPORT_COLUMNS[i]);
  if (isDefault) return toCsvRecord;
  const indexes = columns.map((c) => EXPORT_COLUMNS.indexOf(c));
  return (row) => {
    const full = toCsvRecord(row);
    return indexes.map((i) => full[i]!);
  };
}

/** The UTF-8 byte order mark: Excel reads a CSV as UTF-8 only when the file starts with it. */
export const UTF8_BOM = '\uFEFF';
