import type { Database, Statement } from '@/db/client';
import { accessShape, type CallerScope } from '@/db/queries/access';
import { countStatement } from '@/db/queries/contracts/count';
import { figuresStatement } from '@/db/queries/contracts/figures';
import type { Sort } from '@/db/queries/contracts/expressions';
import type { ContractFilters } from '@/db/queries/contracts/filters';
import { pageStatements, selectContractPage, selectPlannedPage, type Cursor } from '@/db/queries/contracts/page';
import { pathCount, type Figures } from '@/db/queries/contracts/plan';
import { planContractList, planWithFigures, type CountOptions, type PageRequest } from '@/db/queries/contracts/planning';

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

/** The figures that make every path walk (its range "holds" more rows than any threshold), for a plan that needs figures. */
export function walkingFigures(scope: CallerScope, filters: ContractFilters): Figures {
  const shape = accessShape(scope, filters.organizationId);
  const many = Array.from({ length: shape ? pathCount(shape) : 0 }, () => Number.MAX_SAFE_INTEGER);
  return { inRange: many, searchRange: many };
}

/** The figures that make every path read its range (it "holds" none). */
export function readingFigures(scope: CallerScope, filters: ContractFilters): Figures {
  const none = walkingFigures(scope, filters).inRange!.map(() => 0);
  return { inRange: none, searchRange: none, matchIds: none.map(() => []) };
}

/** A page with every path walked, whatever the figures say: the walk is right for any figures, so it must equal the chosen plan's page. */
export async function selectWalkedPage(db: Database, scope: CallerScope, filters: ContractFilters, page: PageRequest): Promise<string[]> {
  const list = planWithFigures(scope, filters, page, {}, walkingFigures(scope, filters));
  return list ? (await selectPlannedPage(db, list, page)).map((r) => r.id) : [];
}

/** Which range the plan reads instead of walking, for these filters and sort (none: every path walks). */
export async function choiceKind(db: Database, scope: CallerScope, filters: ContractFilters, sort: Sort): Promise<string | undefined> {
  return (await planContractList(db, scope, filters, { sort }))?.plan.needs.choice?.kind;
}

/** Every statement a page or total may run (the figures' too), over figures that make every path walk and every path read its range. */
export function everyStatement(scope: CallerScope, filters: ContractFilters, page: PageRequest, options: CountOptions = {}): Statement<unknown>[] {
  const statements: Statement<unknown>[] = [];
  for (const figures of [walkingFigures(scope, filters), readingFigures(scope, filters)]) {
    const list = planWithFigures(scope, filters, page, options, figures);
    if (!list) continue;
    const { first, thenNulls } = pageStatements(list, page);
    const count = countStatement(list);
    const figuresRead = figuresStatement(scope, list.shape, list.filter, list.plan.needs);
    // The page's first statement first: callers read [0] as the page.
    statements.push(first as Statement<unknown>, ...(thenNulls ? [thenNulls as Statement<unknown>] : []), ...(count ? [count as Statement<unknown>] : []));
    if (figuresRead) statements.push(figuresRead as Statement<unknown>);
  }
  return statements;
}
