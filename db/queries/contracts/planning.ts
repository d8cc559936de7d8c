import type { Database } from '../../client';
import { accessShape, type AccessShape, type CallerScope } from '../access';
import { DEFAULT_ORDER, type Sort } from './expressions';
import { readFigures } from './figures';
import { filterShape, matchesNothing, type ContractFilters, type FilterShape } from './filters';
import { figuresNeeded, planList, type Figures, type ListPlan, type ListRequest } from './plan';

/**
 * A list request planned for one caller: the plan (plan.ts, a value) with what its
 * statements are built from (the scope's values, the filters' clauses). Page and total
 * share one plan, so its figures are read once.
 */
export interface PlannedList {
  plan: ListPlan;
  scope: CallerScope;
  shape: AccessShape;
  filter: FilterShape;
}

/** Position after which the next page starts, in the order of the sort: the last row's key (as text) and id. */
export interface Cursor {
  key: string | null;
  id: string;
}

export interface PageRequest {
  limit: number;
  offset?: number;
  after?: Cursor;
  sort?: Sort;
}

export interface CountOptions {
  /** Count at most this many matches of a text search (q), then stop (`exact: false`). */
  searchCap?: number;
}

/** A page request, or undefined when only the total is asked. */
type PageAsked = Omit<PageRequest, 'limit'> | undefined;

function listRequest(shape: AccessShape, filters: ContractFilters, filter: FilterShape, asked: PageAsked, options: CountOptions): ListRequest {
  const page = asked ?? {};
  return {
    ...(asked ? {} : { totalOnly: true }),
    access: shape,
    filters: filter.names,
    ...(filters.status !== undefined ? { status: filters.status } : {}),
    sort: page.sort ?? DEFAULT_ORDER,
    offset: page.offset ?? 0,
    ...(page.after ? { cursor: { nullKey: page.after.key === null } } : {}),
    ...(options.searchCap !== undefined ? { searchCap: options.searchCap } : {}),
  };
}

interface Unplanned {
  request: ListRequest;
  scope: CallerScope;
  shape: AccessShape;
  filter: FilterShape;
}

/** The request as the plan reads it; undefined when nothing can match (no such organisation in the scope, or contradicting filters). */
function unplanned(scope: CallerScope, filters: ContractFilters, page: PageAsked, options: CountOptions): Unplanned | undefined {
  const shape = accessShape(scope, filters.organizationId);
  if (!shape || matchesNothing(filters)) return undefined;
  const filter = filterShape(filters);
  return { request: listRequest(shape, filters, filter, page, options), scope, shape, filter };
}

/** The plan with given figures (tests and tools choosing a branch; the service reads them: planContractList). */
export function planWithFigures(scope: CallerScope, filters: ContractFilters, page: PageAsked, options: CountOptions, figures: Figures): PlannedList | undefined {
  const list = unplanned(scope, filters, page, options);
  return list && { plan: planList(list.request, figures), scope, shape: list.shape, filter: list.filter };
}

/** Reads the figures the request's plan needs (most need none: no statement) and plans it. */
export async function planContractList(
  db: Database,
  scope: CallerScope,
  filters: ContractFilters,
  page: PageAsked,
  options: CountOptions = {},
): Promise<PlannedList | undefined> {
  const list = unplanned(scope, filters, page, options);
  if (!list) return undefined;
  const figures = await readFigures(db, scope, list.shape, list.filter, figuresNeeded(list.request));
  return { plan: planList(list.request, figures), scope, shape: list.shape, filter: list.filter };
}
