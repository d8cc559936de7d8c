import { z } from 'zod';
import type { ContractDetailRow, ContractSummaryRow } from '@/db/queries/contracts/columns';
import { CONTRACT_STATUSES, showsExtractedData } from '@/lib/contracts';
import { DURATION_PATTERN, renewalDecision } from '@/lib/renewal-dates';
import { utcToday } from '@/server/dates';

/**
 * The contract as the API shows it, defined once: these zod schemas validate every
 * response and write the OpenAPI document, `toSummary`/`toDetail` are typed by them (a
 * field added here and not filled there does not compile), and the CSV export's columns
 * and cells are derived from the detail (so a new field is exported too).
 */

const timestamp = z.iso.datetime().meta({ description: 'ISO 8601 UTC timestamp', example: '2026-10-01T09:00:00.000Z' });
const isoDate = z.iso.date().meta({ description: 'Date, YYYY-MM-DD', example: '2027-03-31' });
const duration = z.string().regex(DURATION_PATTERN);

export const contractSummary = z
  .object({
    id: z.guid(),
    title: z.string(),
    status: z.enum(CONTRACT_STATUSES).meta({ description: 'Processing status of the contract.' }),
    file_name: z.string().meta({ description: 'Name of the uploaded file.' }),
    file_size: z.int().min(0).meta({ description: 'Size of the uploaded file in bytes.' }),
    created_at: timestamp,
    updated_at: timestamp,
    organization_id: z.guid().nullable().meta({ description: 'null for a personal contract.' }),
  })
  .meta({ id: 'ContractSummary' });

export const extractedData = z
  .object({
    expiration_date: isoDate.nullable(),
    renewal_date: isoDate.nullable().meta({ description: 'The renewal date extracted from the document (for an evergreen contract it may be past: see `next_renewal_date`).' }),
    notice_period: duration.nullable().meta({
      description: 'How long before a renewal notice must be given to stop it: an ISO 8601 duration of years, months, weeks and days (`P30D`, `P8W`, `P3M`, `P1Y`).',
      example: 'P90D',
    }),
    renewal_term: duration.nullable().meta({
      description: 'The length of each automatic renewal: an ISO 8601 duration (`P1Y`, `P1M`, `P2Y`).',
      example: 'P1Y',
    }),
    next_renewal_date: isoDate.nullable().meta({
      description:
        'Computed: `renewal_date` when it is today or later; for an auto-renewing contract whose `renewal_date` has passed and whose `renewal_term` is known, the first `renewal_date + k × renewal_term` (k = 1, 2, …) that is today or later, each counted from the contract\'s own day; otherwise `renewal_date`. Years and months apply first, clamped to the month\'s last day (2027-01-31 + P1M = 2027-02-28; + 2 × P1M = 2027-03-31), then weeks and days. Today is the UTC date.',
    }),
    notice_deadline: isoDate.nullable().meta({
      description:
        'Computed: for an auto-renewing contract with a `notice_period` and a `next_renewal_date`, the last day on which notice stops that renewal, `next_renewal_date − notice_period` (months first, clamped: 2027-03-31 − P1M = 2027-02-28); else null. A past deadline means this renewal can no longer be stopped.',
    }),
    auto_renewal: z.boolean().nullable(),
    contract_value: z.number().nullable(),
    currency: z.string().length(3).nullable().meta({ description: 'ISO 4217 currency code.', example: 'EUR' }),
    parties: z.object({ provider: z.string().nullable(), client: z.string().nullable() }),
    summary: z.string().nullable(),
    confidence_score: z.number().min(0).max(1).nullable().meta({ description: 'Fraction between 0 and 1.' }),
  })
  .meta({
    id: 'ExtractedData',
    description: 'Data extracted from the file; each field is null when extraction did not find it.',
  });

export const contractDetail = contractSummary
  .extend({
    data: extractedData.nullable().meta({ description: 'null until the contract is completed.' }),
  })
  .meta({ id: 'ContractDetail' });

export type ContractSummary = z.output<typeof contractSummary>;
export type ContractDetail = z.output<typeof contractDetail>;

export const pagination = z
  .object({
    limit: z.int().min(1).max(100).meta({ description: 'The page size applied (1 to 100).' }),
    offset: z.int().min(0).meta({ description: 'The offset applied (0 with a cursor).' }),
    total: z.int().min(0).meta({
      description:
        'Number of contracts matching the filters. Exact, except with `q`: a text search counts at most 1,000 matches, and when more match `total` is 1000 and `total_exact` is false (read it as "at least 1,000"; page on with `has_more`).',
    }),
    total_exact: z.boolean().meta({
      description: 'false only when `q` matches more than 1,000 contracts and `total` is that lower bound; true otherwise.',
    }),
    next_cursor: z.string().nullable().meta({ description: 'Pass as `cursor` for the next page (same filters and sort); null on the last page. Also in the `Link: <…>; rel="next"` header.' }),
    has_more: z.boolean().meta({ description: 'Whether contracts follow this page.' }),
  })
  .meta({ id: 'Pagination' });

export const listContractsOutput = z
  .object({
    success: z.literal(true),
    data: z.object({ contracts: z.array(contractSummary), pagination }),
  })
  .meta({ id: 'ContractList', description: 'A page of contracts and where it sits in the whole list.' });

export const getContractOutput = z
  .object({
    success: z.literal(true),
    data: z.object({ contract: contractDetail }),
  })
  .meta({ id: 'ContractResponse', description: 'One contract with its extracted data.' });

// Rows to the wire ------------------------------------------------------------------------

/** Written as object literals, without spreads: these run once per listed or exported row. */
export function toSummary(row: ContractSummaryRow): ContractSummary {
  return {
    id: row.id,
    title: row.title,
    status: row.status,
    file_name: row.fileName,
    file_size: row.fileSize,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
    organization_id: row.organizationId,
  };
}

/** The detail; its computed renewal dates on `today` (the UTC date: lib/renewal-dates.ts). */
export function toDetail(row: ContractDetailRow, today: string = utcToday()): ContractDetail {
  return Object.assign(toSummary(row), {
    // Extracted data exists only once extraction has completed.
    data: showsExtractedData(row.status) ? extractedDataOf(row, today) : null,
  });
}

function extractedDataOf(row: ContractDetailRow, today: string): NonNullable<ContractDetail['data']> {
  const decision = renewalDecision(row, today);
  return {
    expiration_date: row.expirationDate,
    renewal_date: row.renewalDate,
    notice_period: row.noticePeriod,
    renewal_term: row.renewalTerm,
    next_renewal_date: decision.nextRenewalDate,
    notice_deadline: decision.noticeDeadline,
    auto_renewal: row.autoRenewal,
    contract_value: row.contractValue,
    currency: row.currency,
    parties: { provider: row.provider, client: row.client },
    summary: row.summary,
    confidence_score: row.confidenceScore,
  };
}

// The detail flattened, for the CSV export ----------------------------------------------

type Extracted = z.output<typeof extractedData>;
/** A column of the export: a leaf of the detail, named by its own key (parties become provider and client). */
export type ExportColumn = Exclude<keyof ContractSummary, never> | Exclude<keyof Extracted, 'parties'> | keyof Extracted['parties'];
export type Cell = string | number | boolean | null;

interface Leaf {
  column: ExportColumn;
  read: (detail: ContractDetail) => Cell;
  /** An instant (created_at, updated_at), which the export can write in another form. */
  isTimestamp: boolean;
}

/**
 * The leaves of an object schema in their order, nested objects flattened in place; a
 * nullable object (the extracted data, null until completed) reads as null cells.
 */
function leavesOf(schema: z.ZodObject, read: (detail: ContractDetail) => Record<string, unknown> | null): Leaf[] {
  return Object.entries(schema.shape).flatMap(([key, field]): Leaf[] => {
    const inner = field instanceof z.ZodNullable ? (field.unwrap() as z.ZodType) : (field as z.ZodType);
    if (inner instanceof z.ZodObject) {
      return leavesOf(inner, (detail) => {
        const parent = read(detail);
        return parent === null ? null : (parent[key] as Record<string, unknown> | null);
      });
    }
    return [{ column: key as ExportColumn, read: (detail) => (read(detail)?.[key] as Cell | undefined) ?? null, isTimestamp: inner === timestamp }];
  });
}

const LEAVES = leavesOf(contractDetail, (detail) => detail as unknown as Record<string, unknown>);

/** The export's columns, in the detail's order (docs/api-decisions.md lists the same). */
export const EXPORT_COLUMNS: readonly ExportColumn[] = LEAVES.map((leaf) => leaf.column);

if (new Set(EXPORT_COLUMNS).size !== EXPORT_COLUMNS.length) {
  throw new Error(`two fields of the contract detail flatten to the same export column: ${EXPORT_COLUMNS.join(', ')}`);
}

/**
 * The cells of the chosen columns (default: all, in order) of one contract, timestamps
 * written by `timestamp` (default: as on the wire, ISO 8601).
 */
export function cellWriter(
  columns: readonly ExportColumn[] = EXPORT_COLUMNS,
  timestampCell: (iso: string) => string = (iso) => iso,
): (detail: ContractDetail) => Cell[] {
  const leaves = columns.map((column) => LEAVES.find((leaf) => leaf.column === column)!);
  const reads = leaves.map((leaf) =>
    leaf.isTimestamp
      ? (detail: ContractDetail) => {
          const value = leaf.read(detail);
          return typeof value === 'string' ? timestampCell(value) : value;
        }
      : leaf.read,
  );
  return (detail) => reads.map((read) => read(detail));
}
