import { contracts, type Contract } from '../../schema';

/** The columns of the API's contract summary and detail (server/contracts/shape.ts maps them to the wire). */
export const summaryColumns = {
  id: contracts.id,
  title: contracts.title,
  status: contracts.status,
  fileName: contracts.fileName,
  fileSize: contracts.fileSize,
  createdAt: contracts.createdAt,
  updatedAt: contracts.updatedAt,
  organizationId: contracts.organizationId,
};

export const detailColumns = {
  ...summaryColumns,
  expirationDate: contracts.expirationDate,
  renewalDate: contracts.renewalDate,
  autoRenewal: contracts.autoRenewal,
  noticePeriod: contracts.noticePeriod,
  renewalTerm: contracts.renewalTerm,
  contractValue: contracts.contractValue,
  currency: contracts.currency,
  provider: contracts.provider,
  client: contracts.client,
  summary: contracts.summary,
  confidenceScore: contracts.confidenceScore,
};

export type ContractColumns = typeof summaryColumns | typeof detailColumns;
export type ContractSummaryRow = Pick<Contract, keyof typeof summaryColumns>;
export type ContractDetailRow = Pick<Contract, keyof typeof detailColumns>;

/**
 * A contract row as Postgres's to_jsonb() wrote it (the webhook outbox keeps one per event),
 * read back as the detail's columns with each column's own driver mapping, so that it
 * becomes the API's shape through the same toDetail() as a row read by a query.
 */
export function detailRowOfJson(json: Record<string, unknown>): ContractDetailRow {
  const row: Record<string, unknown> = {};
  for (const [key, column] of Object.entries(detailColumns)) {
    const value = json[column.name];
    row[key] = value === null || value === undefined ? null : column.mapFromDriverValue(value as never);
  }
  return row as ContractDetailRow;
}
