import type { Database } from '@/db/client';
import type { Sort } from '@/db/queries/contracts/expressions';
import type { ContractFilters } from '@/db/queries/contracts/filters';
import { selectContractPage, type Cursor } from '@/db/queries/contracts/page';
import type { CallerScope } from '@/db/queries/access';

/**
 * Every id of a list walked page after page by cursor (the last row's key and id), as a
 * client pages through it: the property tests compare it with the naive sort. Stops at a
 * short page, or after `maxPages` (a walk that never ends is a failure, not a hang).
 */
export async function walkByCursor(
  db: Database,
  scope: CallerScope,
  filters: ContractFilters,
  sort: Sort,
  pageSize: number,
  maxPages = 100,
): Promise<string[]> {
  const walked: string[] = [];
  let after: Cursor | undefined;
  for (let i = 0; i < maxPages; i++) {
    const page = await selectContractPage(db, scope, filters, { limit: pageSize, sort, after });
    walked.push(...page.map((r) => r.id));
    if (page.length < pageSize) break;
    const last = page.at(-1)!;
    after = { key: last.sortKeyText, id: last.id };
  }
  return walked;
}
