import type { Database } from '@/db/client';
import {
  countContracts,
  detailColumns,
  selectContract,
  summaryColumns,
  selectContractPage,
  type AccessScope,
  type ContractDetailRow,
  type ContractFilters,
  type ContractSummaryRow,
  type Cursor,
  type PageRow,
} from '@/db/queries/contracts';
import { DEFAULT_ORDER, type Sort } from '@/db/queries/contract-expressions';
import { AppError } from '@/server/errors';

/**
 * The contracts service: plain functions of (database, caller, input) shared by the REST
 * procedures, the CSV export and the app's pages. Access rules live here and in the
 * queries they call, nowhere else.
 */

export function toSummary(row: ContractSummaryRow) {
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

export function toDetail(row: ContractDetailRow) {
  return {
    ...toSummary(row),
    // Extracted data exists only once extraction has completed.
    data:
      row.status === 'completed'
        ? {
            expiration_date: row.expirationDate,
            renewal_date: row.renewalDate,
            auto_renewal: row.autoRenewal,
            contract_value: row.contractValue,
            currency: row.currency,
            parties: { provider: row.provider, client: row.client },
            summary: row.summary,
            confidence_score: row.confidenceScore,
          }
        : null,
  };
}

/** An organisation filter is allowed only for the caller's own organisations. */
export function checkFilters(caller: AccessScope, filters: ContractFilters): void {
  if (filters.organizationId !== undefined && !caller.organizationIds.includes(filters.organizationId)) {
    throw new AppError('forbidden', 'You are not a member of this organisation.', [
      { param: 'organization_id', message: 'You are not a member of this organisation.' },
    ]);
  }
}

type ListInput = { filters: ContractFilters; limit: number; offset: number; sort?: Sort };

/** A page of contracts in the list's order and the total, with rows shaped by `shape`. */
async function listPage<T>(
  db: Database,
  caller: AccessScope,
  input: ListInput,
  columns: typeof summaryColumns | typeof detailColumns,
  shape: (row: ContractDetailRow) => T,
) {
  checkFilters(caller, input.filters);
  const [rows, total] = await Promise.all([
    selectContractPage<ContractDetailRow>(db, caller, input.filters, { limit: input.limit, offset: input.offset, sort: input.sort }, columns),
    countContracts(db, caller, input.filters),
  ]);
  return {
    contracts: rows.map(shape),
    pagination: { limit: input.limit, offset: input.offset, total },
  };
}

/** The API's list: summaries. */
export function listContracts(db: Database, caller: AccessScope, input: ListInput) {
  return listPage(db, caller, input, summaryColumns, toSummary);
}

/** The same page with every contract's extracted data, in one query (the app's contracts page). */
export function listContractDetails(db: Database, caller: AccessScope, input: ListInput) {
  return listPage(db, caller, input, detailColumns, toDetail);
}

/** One contract; a missing id and another tenant's id are the same 404. */
export async function getContract(db: Database, caller: AccessScope, id: string) {
  const row = await selectContract(db, caller, id);
  if (!row) throw new AppError('not_found', 'Contract not found.');
  return toDetail(row);
}

/**
 * Every matching contract in list order, a page at a time, continuing after the last row
 * of the previous page (keyset), so memory stays flat and deep pages cost no more.
 *
 * The next page is read while the caller works on the current one (Postgres runs the
 * query while Node formats the page): at most one query in flight and two pages in memory.
 */
export async function* contractsInPages(
  db: Database,
  caller: AccessScope,
  filters: ContractFilters,
  pageSize = 1000,
  sort: Sort = DEFAULT_ORDER,
): AsyncGenerator<ContractDetailRow[]> {
  checkFilters(caller, filters);
  type Row = PageRow<ContractDetailRow>;
  const pageAfter = (after: Cursor | undefined) =>
    selectContractPage<ContractDetailRow>(db, caller, filters, { limit: pageSize, after, sort }, detailColumns);
  let next: Promise<Row[]> | undefined = pageAfter(undefined);
  try {
    while (next) {
      const rows: Row[] = await next;
      next = undefined;
      if (rows.length === pageSize) {
        const last = rows[rows.length - 1]!;
        next = pageAfter({ key: last.sortKeyText, id: last.id });
      }
      if (rows.length > 0) yield rows;
    }
  } finally {
    // The caller stopped early: the page read ahead is dropped, and so is its failure.
    next?.catch(() => undefined);
  }
}
