import type { Database } from '../../client';
import type { CallerScope } from '../access';
import { countPlanned, type ContractTotal } from './count';
import type { ContractColumns, ContractSummaryRow } from './columns';
import type { ContractFilters } from './filters';
import { selectPlannedPage, type PageRow } from './page';
import { planContractList, type CountOptions, type PageRequest } from './planning';

/** A page and its total from one plan: the figures are read once, then the page and the total side by side. */
export async function selectPageAndTotal<T extends ContractSummaryRow>(
  db: Database,
  scope: CallerScope,
  filters: ContractFilters,
  page: PageRequest,
  columns: ContractColumns,
  options: CountOptions,
): Promise<{ rows: PageRow<T>[]; total: ContractTotal }> {
  const list = await planContractList(db, scope, filters, page, options);
  if (!list) return { rows: [], total: { total: 0, exact: true } };
  const [rows, total] = await Promise.all([selectPlannedPage<T>(db, list, page, columns), countPlanned(db, list)]);
  return { rows, total };
}
