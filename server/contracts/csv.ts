import Papa from 'papaparse';
import type { ContractDetailRow } from '@/db/queries/contracts';
import { EXPORT_COLUMNS } from './schemas';

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
  return `${Papa.unparse(records, { newline: '\r\n', escapeFormulae: FORMULA_START, header: false })}\r\n`;
}

// papaparse's own pattern for `escapeFormulae: true` (/^[=+\-@\t\r].*$/) misses text that
// contains a line break, because `.` does not match one: test the first character only.
const FORMULA_START = /^[=+\-@\t\r]/;

export function csvHeaderLine(): string {
  return toCsvLines([[...EXPORT_COLUMNS]]);
}
