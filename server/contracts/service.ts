import type { Database } from '@/db/client';
import { selectContract } from '@/db/queries/contracts/by-id';
import { detailColumns, summaryColumns, type ContractColumns, type ContractDetailRow } from '@/db/queries/contracts/columns';
import { DEFAULT_ORDER, type Sort } from '@/db/queries/contracts/expressions';
import type { ContractFilters } from '@/db/queries/contracts/filters';
import { selectPageAndTotal } from '@/db/queries/contracts/list';
import { selectContractPage, type Cursor, type PageRow } from '@/db/queries/contracts/page';
import { assertMemberOf, type CallerScope } from '@/server/access/scope';
import { AppError } from '@/server/errors';
import { utcToday } from '@/server/dates';
import { toDetail, toSummary } from './shape';

/**
 * The contracts service: plain functions of (database, caller's scope, input) shared by
 * the REST procedures, the CSV export, the calendar feed and the app's pages. Who sees
 * what is decided by the scope and db/queries/access.ts, nowhere else.
 */

/**
 * A list with q counts its matches up to this many (pagination.total_exact false beyond):
 * a substring search is counted by reading the matches, which for a word in a sixth of
 * 500,000 contracts takes 150 to 300 ms; a thousand are found in a few milliseconds.
 * Every other filter's total is exact (counters, db/queries/contracts/count.ts).
 */
export const SEARCH_TOTAL_CAP = 1000;

type ListInput = { filters: ContractFilters; limit: number; offset: number; sort?: Sort; after?: Cursor };

/**
 * A page of contracts in the list's order and the total, with rows shaped by `shape`, at
 * an offset or after a cursor. One row more than the page is read, to know whether
 * another page follows; `next` is the position after the page's last row.
 */
async function listPage<T>(db: Database, scope: CallerScope, input: ListInput, columns: ContractColumns, shape: (row: ContractDetailRow) => T) {
  assertMemberOf(scope, input.filters.organizationId);
  const { rows, total } = await selectPageAndTotal<ContractDetailRow>(
    db,
    scope,
    input.filters,
    { limit: input.limit + 1, offset: input.offset, after: input.after, sort: input.sort },
    columns,
    { searchCap: SEARCH_TOTAL_CAP },
  );
  const hasMore = rows.length > input.limit;
  const page = hasMore ? rows.slice(0, input.limit) : rows;
  const last = page.at(-1);
  return {
    // Not page.map(shape): the index would reach toDetail as its `today`.
    contracts: page.map((row) => shape(row)),
    pagination: { limit: input.limit, offset: input.offset, total: total.total, total_exact: total.exact },
    hasMore,
    next: hasMore && last ? ({ key: last.sortKeyText, id: last.id } satisfies Cursor) : undefined,
  };
}

/** The API's list: summaries. */
export function listContracts(db: Database, scope: CallerScope, input: ListInput) {
  return listPage(db, scope, input, summaryColumns, toSummary);
}

/** The same page with every contract's extracted data, in one query (the app's contracts page). */
export function listContractDetails(db: Database, scope: CallerScope, input: ListInput) {
  // The filters' day: a contract in a renewal window shows the dates that put it there.
  const today = input.filters.today ?? utcToday();
  return listPage(db, scope, input, detailColumns, (row) => toDetail(row, today));
}

/** One contract; a missing id and another tenant's id are the same 404. */
export async function getContract(db: Database, scope: CallerScope, id: string) {
  const row = await selectContract(db, scope, id);
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
  scope: CallerScope,
  filters: ContractFilters,
  pageSize = 1000,
  sort: Sort = DEFAULT_ORDER,
): AsyncGenerator<ContractDetailRow[]> {
  assertMemberOf(scope, filters.organizationId);
  type Row = PageRow<ContractDetailRow>;
  const pageAfter = (after: Cursor | undefined) => {
    const page = selectContractPage<ContractDetailRow>(db, scope, filters, { limit: pageSize, after, sort }, detailColumns);
    // The page read ahead may fail while the caller still works on the previous one: it is
    // awaited (and its failure thrown) on the next turn; until then it must not count as
    // an unhandled rejection, which Node reports the moment it happens.
    page.catch(() => undefined);
    return page;
  };
  // A caller that stops early drops the page read ahead, and its failure with it.
  let next: Promise<Row[]> | undefined = pageAfter(undefined);
  while (next) {
    const rows: Row[] = await next;
    next = undefined;
    if (rows.length === pageSize) {
      const last = rows[rows.length - 1]!;
      next = pageAfter({ key: last.sortKeyText, id: last.id });
    }
    if (rows.length > 0) yield rows;
  }
}
