import Papa from 'papaparse';
import type { ContractDetailRow } from '@/db/queries/contracts';
import { EXPORT_COLUMNS } from './schemas';
import { toDetail } from './service';

type Cell = string | number | boolean | null;

/** One contract as an export row, in the documented column order: the API's detail, flattened. */
export function toCsvRecord(row: ContractDetailRow): Cell[] {
  const { data, ...summary } = toDetail(row);
  const values: Record<(typeof EXPORT_COLUMNS)[number], Cell> = {
    ...summary,
    expiration_date: data?.expiration_date ?? null,
    renewal_date: data?.renewal_date ?? null,
    auto_renewal: data?.auto_renewal ?? null,
    contract_value: data?.contract_value ?? null,
    currency: data?.currency ?? null,
    provider: data?.parties.provider ?? null,
    client: data?.parties.client ?? null,
    summary: data?.summary ?? null,
    confidence_score: data?.confidence_score ?? null,
  };
  return EXPORT_COLUMNS.map((column) => values[column]);
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
