import Papa from 'papaparse';
import type { ContractDetailRow } from '@/db/queries/contracts';
import { EXPORT_COLUMNS } from './schemas';

type Cell = string | number | boolean | null;

/** One contract as an export row, in the documented column order. */
export function toCsvRecord(row: ContractDetailRow): Cell[] {
  const completed = row.status === 'completed';
  const extracted = <T>(value: T | null): T | null => (completed ? value : null);
  const values: Record<(typeof EXPORT_COLUMNS)[number], Cell> = {
    id: row.id,
    title: row.title,
    status: row.status,
    file_name: row.fileName,
    file_size: row.fileSize,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
    organization_id: row.organizationId,
    expiration_date: extracted(row.expirationDate),
    renewal_date: extracted(row.renewalDate),
    auto_renewal: extracted(row.autoRenewal),
    contract_value: extracted(row.contractValue),
    currency: extracted(row.currency),
    provider: extracted(row.provider),
    client: extracted(row.client),
    summary: extracted(row.summary),
    confidence_score: extracted(row.confidenceScore),
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
  return `${Papa.unparse(records, { newline: '\r\n', escapeFormulae: true, header: false })}\r\n`;
}

export function csvHeaderLine(): string {
  return toCsvLines([[...EXPORT_COLUMNS]]);
}
