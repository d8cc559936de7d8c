import { and, sql, type SQL } from 'drizzle-orm';
import { runStatement, type Database, type Statement } from '../../client';
import { contracts } from '../../schema';
import { accessPaths, accessPathValues, accessShapeName } from '../access';
import { detailColumns, summaryColumns, type ContractColumns, type ContractSummaryRow } from './columns';
import { DEFAULT_ORDER, exactKey, isFresh, isStale, orderTerms, SORT_KEYS, type Sort } from './expressions';
import { filterClauses, filterShapeName, isCommonFilterShape, searchOffIndex, staleFilterClauses, type ContractFilters } from './filters';
import { FEW_MATCHES, readsStaleRows, type Figures, type PathRead } from './plan';
import { planContractList, planWithFigures, type PageRequest, type PlannedList } from './planning';

export type { Cursor, PageRequest } from './planning';

export type PageRow<T> = T & { sortKeyText: string | null };

/**
 * A page's statements, built from its plan (plan.ts): one branch per access path, each read
 * the way the plan says, in the sort's order and cut to limit + offset rows, merged
 * (Merge Append) and cut to the page. No statement chooses at run time: what `EXPLAIN`
 * shows is what runs.
 */

/** Which rows after the cursor a statement reads: one range of the sort's order. */
type Range = 'all' | 'after-key' | 'after-null-key' | 'null-keys';

/**
 * Rows after the cursor, as one range of each path's index: the larger (or smaller) keys
 * and the same key with a later id (`after-key`), the nulls with a later id after a null key,
 * or every null (after a non-null key, once the keys have run out: plan.ts).
 */
function rangeClause(sort: Sort, range: Range, expression: SQL = SORT_KEYS[sort.field].expression): SQL | undefined {
  const key = SORT_KEYS[sort.field];
  const op = sql.raw(sort.descending ? '<' : '>');
  const afterId = sql`${sql.placeholder('afterId')}::uuid`;
  if (range === 'after-null-key') return sql`(${expression} IS NULL AND ${contracts.id} ${op} ${afterId})`;
  if (range === 'null-keys') return sql`${expression} IS NULL`;
  if (range === 'after-key') return sql`(${expression}, ${contracts.id}) ${op} (${sql`${sql.placeholder('afterKey')}::${sql.raw(key.type)}`}, ${afterId})`;
  return undefined;
}

/** Selected with every page: the sort key, typed (to merge the branches) and as text (for a cursor). */
function sortColumns(key: SQL) {
  return { sortKey: sql<unknown>`${key}`.as('sort_key'), sortKeyText: sql<string | null>`(${key})::text`.as('sort_key_text') };
}

const readsName = (reads: readonly PathRead[]) => (reads.every((r) => r === reads[0]) ? reads[0]! : reads.join(','));

/** Cut to `limit` after `offset` (placeholders), or, for the steps of a two-statement page, to limit + offset from the start. */
interface Cut {
  offset: boolean;
}

function pageStatement<T extends ContractSummaryRow>(list: PlannedList, page: PageRequest, columns: ContractColumns, range: Range, cut: Cut): Statement<PageRow<T>[]> {
  const { plan, scope, shape, filter } = list;
  const { reads, deferred, nullKeys, stale } = plan.page;
  const sort = page.sort ?? DEFAULT_ORDER;
  const offset = page.offset ?? 0;
  const key = SORT_KEYS[sort.field].expression;
  const values: Record<string, unknown> = { ...accessPathValues(scope, shape), ...filter.values, limit: cut.offset ? page.limit : page.limit + offset, branchLimit: page.limit + offset };
  reads.forEach((read, i) => {
    if (read === 'matches') values[`matches${i}`] = `{${plan.figures.matchIds![i]!.join(',')}}`;
  });
  if (page.after && range !== 'all' && range !== 'null-keys') Object.assign(values, { afterId: page.after.id, ...(page.after.key !== null ? { afterKey: page.after.key } : {}) });
  const hasOffset = cut.offset && offset > 0;
  if (hasOffset) values.offset = offset;
  const name = [
    'contracts.page',
    columns === detailColumns ? 'detail' : 'summary',
    accessShapeName(shape),
    filterShapeName(filter),
    `${sort.descending ? '-' : ''}${sort.field}`,
    readsName(reads),
    ...(hasOffset ? ['offset'] : []),
    ...(range !== 'all' ? [range] : []),
    ...(deferred ? ['deferred'] : []),
    ...(nullKeys ? ['null-keys'] : []),
    ...(stale ? ['stale'] : []),
  ].join(' ');
  const build = (db: Database) => {
    const paths = accessPaths(shape);
    const limit = sql.placeholder('limit');
    const branchLimit = sql.placeholder('branchLimit');
    const offsetValue = hasOffset ? sql.placeholder('offset') : 0;
    const selection = { ...columns, ...sortColumns(key) };
    const after = rangeClause(sort, range);
    const nullKey = nullKeys ? sql`${key} IS NULL` : undefined;
    // With a rolling filter or sort every read keeps to the rows whose stored dates are
    // right; stale ones, if the figures found any, are read apart. Without a stale branch the
    // test still holds: a row made stale by a write after the figures' probe is left out of
    // this page (as if written after it), not shown with its stored dates.
    const fresh = readsStaleRows(plan.request) ? isFresh : undefined;
    // A deferred page: the branches yield ids and sort keys only, and the page's rows are
    // read by id once the paths are merged and cut to the page: one heap read per row of
    // the page rather than one per row of every branch.
    const branchSelection = (deferred ? { id: contracts.id, sortKey: sql<unknown>`${key}`.as('sort_key') } : selection) as typeof selection;
    const byKey = orderTerms(sort, key, sql`${contracts.id}`);
    const byColumn = (keyColumn: string, idColumn: SQL) => orderTerms(sort, sql`${sql.identifier(keyColumn)}`, idColumn);

    // walk: the sort's index of the path, in order, every filter tested on each row.
    const walk = (where: SQL) => db.select(branchSelection).from(contracts).where(and(where, ...filterClauses(filter), nullKey, fresh, after)).orderBy(...byKey).limit(branchLimit);

    // range: the path's rows updated since (at most FEW_MATCHES: the figures say so), then
    // sorted. The subquery's LIMIT cuts nothing, but keeps Postgres from planning it as a
    // walk of the sort's index and from costing it as the table-wide share of the path
    // (which priced the statement above the JIT threshold: 45 ms of compiling). q is tested
    // on the range's rows, not intersected with the trigram index (searchOffIndex).
    const readRange = (where: SQL) => {
      const inRange = db
        .select(selection)
        .from(contracts)
        .where(and(where, ...searchOffIndex(filter), nullKey, fresh, after))
        .limit(FEW_MATCHES)
        .as('in_range');
      return db.select().from(inRange).orderBy(...byColumn('sort_key', sql`${sql.identifier('id')}`)).limit(branchLimit);
    };

    // window and matches: ids and sort keys of the path's rows in the window (from the
    // window's covering index, index-only) or of its matches (ids from its index of
    // contracts not completed, which holds the search text; then their sort keys by id:
    // as one scan, Postgres read every row of the status from the heap to test the word
    // there, the sort key not being in that index), sorted and cut.
    const readKeys = (where: SQL, read: 'window' | 'matches', i: number) => {
      const few = plan.needs.choice!.few;
      const rowsOf =
        read === 'window'
          ? and(where, ...searchOffIndex(filter), nullKey, fresh, after)
          : and(sql`${contracts.id} = any(${sql.placeholder(`matches${i}`)}::uuid[])`, after);
      const keys = db
        .select({ id: contracts.id, key: sql`${key}`.as('window_key') })
        .from(contracts)
        .where(rowsOf)
        .limit(few)
        .as('in_window');
      const windowId = sql`${sql.identifier('in_window')}.${sql.identifier('id')}`;
      return db
        .select({ id: sql<string>`${windowId}`.as('id'), sortKey: sql<unknown>`${sql.identifier('window_key')}`.as('sort_key') })
        .from(keys)
        .orderBy(...byColumn('window_key', windowId))
        .limit(branchLimit) as unknown as ReturnType<typeof walk>;
    };

    // stale: the path's evergreen contracts not rolled forward yet (the rolling index's range
    // before today: a day's renewals when the job runs), every filter and the key by the rule.
    const staleKey = SORT_KEYS[sort.field].rolled ?? key;
    const staleRows = (where: SQL) =>
      db
        .select((deferred ? { id: contracts.id, sortKey: sql<unknown>`${staleKey}`.as('sort_key') } : { ...columns, ...sortColumns(staleKey) }) as typeof selection)
        .from(contracts)
        .where(and(where, isStale, ...staleFilterClauses(filter), rangeClause(sort, range, staleKey)))
        .orderBy(...orderTerms(sort, staleKey, sql`${contracts.id}`))
        .limit(branchLimit);

    const branches = paths.map((where, i) => {
      const read = reads[i]!;
      if (read === 'walk') return walk(where);
      return read === 'range' ? (readRange(where) as unknown as ReturnType<typeof walk>) : readKeys(where, read, i);
    });
    if (stale) branches.push(...paths.map(staleRows));
    if (branches.length === 1 && reads[0] === 'walk' && !deferred) {
      return db.select(selection).from(contracts).where(and(paths[0], ...filterClauses(filter), nullKey, fresh, after)).orderBy(...byKey).limit(limit).offset(offsetValue);
    }
    const [first, ...rest] = branches as [(typeof branches)[number], ...typeof branches];
    const union = rest.reduce<ReturnType<typeof first.unionAll>>((q, b) => q.unionAll(b), first as never);
    const pageOf = union.orderBy(...byColumn('sort_key', sql`${sql.identifier('id')}`)).limit(limit).offset(offsetValue);
    if (!deferred) return pageOf;
    const pageIds = db.select({ id: sql`${sql.identifier('page_keys')}.${sql.identifier('id')}` }).from(pageOf.as('page_keys'));
    // The page's rows by id: a stale row's key by the rule, as its branch had it.
    const exact = stale ? exactKey(sort.field) : key;
    return db
      .select({ ...columns, ...sortColumns(exact) })
      .from(contracts)
      .where(sql`${contracts.id} IN (${pageIds})`)
      .orderBy(...orderTerms(sort, exact, sql`${contracts.id}`));
  };
  const prepareOnServer = isCommonFilterShape(filter) && sort.field === DEFAULT_ORDER.field && sort.descending === DEFAULT_ORDER.descending;
  return { name, build: build as unknown as Statement<PageRow<T>[]>['build'], values, prepareOnServer };
}

/**
 * The statements of a planned page: one, or, after a non-null key of a nullable sort, the
 * later keys and then the null keys (run only when the keys do not fill the page).
 */
export function pageStatements<T extends ContractSummaryRow = ContractSummaryRow>(
  list: PlannedList,
  page: PageRequest,
  columns: ContractColumns = summaryColumns,
): { first: Statement<PageRow<T>[]>; thenNulls?: Statement<PageRow<T>[]> } {
  const cursor = list.plan.page.cursor;
  if (cursor === 'after-key-then-nulls') {
    return { first: pageStatement<T>(list, page, columns, 'after-key', { offset: false }), thenNulls: pageStatement<T>(list, page, columns, 'null-keys', { offset: false }) };
  }
  return { first: pageStatement<T>(list, page, columns, cursor ?? 'all', { offset: true }) };
}

/**
 * A page's first statement planned with given figures, for tools and tests that choose a
 * branch (undefined when nothing can match; a plan that needs figures it is not given throws).
 */
export function contractPageStatement<T extends ContractSummaryRow = ContractSummaryRow>(
  scope: PlannedList['scope'],
  filters: ContractFilters,
  page: PageRequest,
  columns: ContractColumns = summaryColumns,
  figures: Figures = {},
): Statement<PageRow<T>[]> | undefined {
  const list = planWithFigures(scope, filters, page, {}, figures);
  return list && pageStatements<T>(list, page, columns).first;
}

/** Reads a planned page. */
export async function selectPlannedPage<T extends ContractSummaryRow = ContractSummaryRow>(
  db: Database,
  list: PlannedList,
  page: PageRequest,
  columns: ContractColumns = summaryColumns,
): Promise<PageRow<T>[]> {
  const { first, thenNulls } = pageStatements<T>(list, page, columns);
  const rows = await runStatement(db, first);
  if (!thenNulls) return rows;
  // Every later key comes before every null key: the nulls only fill what the keys leave.
  const want = page.limit + (page.offset ?? 0);
  const all = rows.length >= want ? rows : [...rows, ...(await runStatement(db, { ...thenNulls, values: { ...thenNulls.values, limit: want - rows.length, branchLimit: want - rows.length } }))];
  return all.slice(page.offset ?? 0, want);
}

/** A page of the caller's contracts in the sort's order (default: created_at descending, then id descending), at an offset or after a cursor. */
export async function selectContractPage<T extends ContractSummaryRow = ContractSummaryRow>(
  db: Database,
  scope: PlannedList['scope'],
  filters: ContractFilters,
  page: PageRequest,
  columns: ContractColumns = summaryColumns,
): Promise<PageRow<T>[]> {
  const list = await planContractList(db, scope, filters, page);
  return list ? selectPlannedPage<T>(db, list, page, columns) : [];
}
