import type { Database } from '@/db/client';
import { DEFAULT_SORT } from '@/lib/contracts';
import type { CallerScope } from '@/server/access/scope';
import { decodeCursor, encodeCursor, filtersFingerprint } from './cursor';
import { toContractFilters, toSort } from './query';
import type { ListContractsInput } from './schemas';
import { listContracts } from './service';

/**
 * GET /api/v1/contracts as a service: the validated query in, the response's `data` out,
 * paged by offset or by cursor (./cursor.ts). Every page, whichever way it was asked for,
 * names the cursor of the next one.
 */
export async function listContractsPage(db: Database, scope: CallerScope, input: ListContractsInput) {
  const sort = input.sort ?? DEFAULT_SORT;
  const fingerprint = filtersFingerprint(input);
  const page = await listContracts(db, scope, {
    filters: toContractFilters(input),
    sort: toSort(sort),
    limit: input.limit,
    offset: input.offset,
    after: input.cursor === undefined ? undefined : decodeCursor(input.cursor, sort, fingerprint),
  });
  const nextCursor = page.next ? encodeCursor(sort, page.next, fingerprint) : null;
  return {
    contracts: page.contracts,
    pagination: { ...page.pagination, next_cursor: nextCursor, has_more: page.hasMore },
  };
}
