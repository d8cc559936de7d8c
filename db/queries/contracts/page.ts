import { and, or, sql, type SQL } from 'drizzle-orm';
import { runStatement, type Database, type Statement } from '../../client';
import { contracts } from '../../schema';
import { accessPaths, accessPathValues, accessShape, accessShapeName, type CallerScope } from '../access';
import { detailColumns, summaryColumns, type ContractColumns, type ContractSummaryRow } from './columns';
import { DEFAULT_ORDER, orderTerms, SORT_KEYS, type Sort } from './expressions';
import { filterShape, filterShapeName, isCommonFilterShape, matchesNothing, searchOffIndex, type ContractFilters, type FilterShape } from './filters';
import { FEW_MATCHES, rangeChoice, rowsInRange } from './range-choice';

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

export type PageRow<T> = T & { sortKeyText: string | null };

/**
 * Rows after the cursor in the sort's order, as one or two ranges of the path's index. A
 * nullable key has three cases: after a non-null key come the larger (or smaller) keys,
 * the same key with a later id, then every null; after a null key only nulls with a later
 * id remain. The first case is two ranges, each read as its own branch: written as one
 * `(key, id) > (…) OR key IS NULL`, no index range can start at the cursor, and a page
 * deep in the list read every row before it (270 ms at row 500,000 of sort=-contract_value).
 * The null range's branch runs only when the key ranges of all paths hold fewer rows than
 * the page needs (contractPageStatement): Merge Append reads the first row of every
 * branch before returning any, so a null branch under a filter that no null-key row
 * passes was walked to its end on every page after the first (renewing_within_days=90
 * sorted by expiration_date at 2M: 212 to 316 ms; now 0.6 ms).
 */
function afterCursor(sort: Sort, cursor: Cursor): { name: string; clauses: SQL[]; values: Record<string, unknown> } {
  const key = SORT_KEYS[sort.field];
  const op = sql.raw(sort.descending ? '<' : '>');
  const afterId = sql`${sql.placeholder('afterId')}::uuid`;
  if (cursor.key === null) {
    return { name: 'after-null-key', clauses: [sql`(${key.expression} IS NULL AND ${contracts.id} ${op} ${afterId})`], values: { afterId: cursor.id } };
  }
  const afterKey = sql`${sql.placeholder('afterKey')}::${sql.raw(key.type)}`;
  const rowAfter = sql`(${key.expression}, ${contracts.id}) ${op} (${afterKey}, ${afterId})`;
  return {
    name: 'after-key',
    clauses: key.nullable ? [rowAfter, sql`${key.expression} IS NULL`] : [rowAfter],
    values: { afterKey: cursor.key, afterId: cursor.id },
  };
}

/** Selected with every page: the sort key, typed (to merge the branches) and as text (for a cursor). */
function sortColumns(sort: Sort) {
  const key = SORT_KEYS[sort.field].expression;
  return { sortKey: sql<unknown>`${key}`.as('sort_key'), sortKeyText: sql<string | null>`(${key})::text`.as('sort_key_text') };
}

/**
 * The statement of one page in the sort's order (default: created_at descending, then id
 * descending), at an offset or after a cursor (keyset). Undefined when there is nothing to
 * read: the organisation filter is outside the scope, or the filters contradict each other.
 *
 * One branch per access path (and per range after a cursor, see afterCursor), each in the
 * sort's order and cut to limit + offset, merged. After a non-null key of a nullable sort:
 *
 *   WITH after_key_rows AS (SELECT count(*) AS n FROM
 *     ((<path 1, key range> LIMIT bl) UNION ALL (<path 2, key range> LIMIT bl) … LIMIT bl) AS first_ranges)
 *   SELECT … FROM ((<path 1, key range> LIMIT bl)
 *     UNION ALL (<path 1, key IS NULL, AND (SELECT n FROM after_key_rows) < bl> LIMIT bl) …) AS after_cursor
 *   ORDER BY sort_key, id LIMIT limit OFFSET offset
 *
 * Without a cursor, after a null key, for a key that is never null, or when each path
 * chooses between walking and reading its range (choosesPerPath), the statement has no
 * CTE (the union alone, or one path's branch).
 */
export function contractPageStatement<T extends ContractSummaryRow = ContractSummaryRow>(
  scope: CallerScope,
  filters: ContractFilters,
  page: PageRequest,
  columns: ContractColumns = summaryColumns,
): Statement<PageRow<T>[]> | undefined {
  const shape = accessShape(scope, filters.organizationId);
  if (!shape || matchesNothing(filters)) return undefined;
  const sort = page.sort ?? DEFAULT_ORDER;
  const offset = page.offset ?? 0;
  const filter = withNullKeys(filterShape(filters), filters, sort);
  const cursor = page.after ? afterCursor(sort, page.after) : undefined;
  const choice = rangeChoice(filter, sort);
  const walkOrRange = choice !== undefined;
  const values: Record<string, unknown> = { ...accessPathValues(scope, shape), ...filter.values, ...cursor?.values };
  values.limit = page.limit;
  values.branchLimit = page.limit + offset;
  const hasOffset = offset > 0;
  if (hasOffset) values.offset = offset;
  const name = [
    'contracts.page',
    columns === detailColumns ? 'detail' : 'summary',
    accessShapeName(shape),
    filterShapeName(filter),
    `${sort.descending ? '-' : ''}${sort.field}`,
    ...(hasOffset ? ['offset'] : []),
    ...(cursor ? [cursor.name] : []),
    ...(choice ? [choice.name] : []),
    ...(filter.clauses.length > filter.names.length ? ['null-keys'] : []),
  ].join(' ');
  const build = (db: Database) => {
    const paths = accessPaths(shape);
    const limit = sql.placeholder('limit');
    const offsetValue = hasOffset ? sql.placeholder('offset') : 0;
    const selection = { ...columns, ...sortColumns(sort) };
    // walk-or-window: the branches yield ids and sort keys only, and the page's rows are
    // read by id once the paths are merged and cut to the page (a deferred join): one heap
    // read per row of the page rather than one per row of every path's branch.
    const sortKeyExpression = SORT_KEYS[sort.field].expression;
    // q with a status other than completed, sorted by created_at: each path walks its index
    // of those contracts, which carries the search text (filters.ts, notCompletedStatus), so
    // a branch that yields ids and sort keys only tests the word on index entries and reads
    // no row it does not keep.
    const narrow = choice ? choice.deferred : filter.notCompleted && sort.field === 'created_at';
    const branchSelection = (narrow ? { id: contracts.id, sortKey: sql<unknown>`${sortKeyExpression}`.as('sort_key') } : selection) as typeof selection;
    // Each branch is ordered and cut to limit + offset rows on its own, which lets Postgres
    // walk each index in order and merge them (Merge Append) instead of sorting the whole set.
    const branch = (where: SQL, after: SQL | undefined) =>
      db
        .select(branchSelection)
        .from(contracts)
        .where(and(where, ...filter.clauses, after))
        .orderBy(...orderTerms(sort, SORT_KEYS[sort.field].expression, sql`${contracts.id}`));
    const ranges: (SQL | undefined)[] = cursor ? cursor.clauses : [undefined];
    const branchLimit = sql.placeholder('branchLimit');
    // After a non-null key of a nullable sort, every row of the first ranges (key after the
    // cursor's) precedes every row of the null ranges. The null ranges are read only when
    // the first ranges of all paths hold fewer than branchLimit rows together: counted
    // once, up to branchLimit, in a CTE (their branches as below, appended path after path,
    // so the count stops as soon as it is reached), and tested by each null branch in a
    // one-time filter (an InitPlan: when it is false, the null range's scan never runs).
    // Not for updated_since alone sorted by another key (walk-or-range): there the count's
    // own per-path decisions (one more InitPlan each) and CTE made a page after a cursor
    // slower (3 ms to 11 ms at 2M, updated_since a quarter of the rows, sort=-contract_value),
    // and updated_since does not exclude the null keys, so its null walks stop soon. With
    // another filter that may exclude them (a window, auto_renewal), it is needed: a page
    // after a cursor took 44 to 76 ms at 2M without it, 4 to 11 ms with it.
    const few = sql.raw(String(choice?.few ?? FEW_MATCHES));
    // Each path's rows in the range, counted up to `few` (walk-or-range, walk-or-window only).
    // walk-or-matches: each path's matches (ids, from the index that tests the word,
    // index-only), at most `few`, once, in a CTE that both the path's choice counts and its
    // sorted branch reads. Counted in a subquery and read again in another, a word found
    // nowhere had every entry of the path's status tested twice.
    const matchSets =
      choice?.name === 'walk-or-matches'
        ? paths.map((where, i) =>
            db
              .$with(`matches_${i}`)
              .as(db.select({ id: contracts.id }).from(contracts).where(and(where, ...choice.clauses)).limit(choice.few)),
          )
        : undefined;
    const matches = matchSets ? matchSets.map((set) => sql`(SELECT count(*) FROM ${set})`) : choice ? rowsInRange(shape, choice) : [];
    const walkGuards = paths.map((_, i) => (walkOrRange ? sql`${matches[i]} >= ${few}` : undefined));
    const twoRanges = ranges.length === 2 && !(choice?.name === 'walk-or-range' && filter.names.length === 1);
    const firstRangeRows = twoRanges
      ? (() => {
          const counted = paths.map((where, i) => branch(where, and(ranges[0], walkGuards[i])).limit(branchLimit));
          const [b0, ...bs] = counted as [(typeof counted)[number], ...typeof counted];
          const firsts = bs.length === 0 ? b0.as('first_ranges') : bs.reduce<ReturnType<typeof b0.unionAll>>((q, b) => q.unionAll(b), b0 as never).limit(branchLimit).as('first_ranges');
          return db.$with('after_key_rows').as(db.select({ n: sql<number>`count(*)`.as('n') }).from(firsts));
        })()
      : undefined;
    const pathRanges = (i: number) => {
      const where = paths[i]!;
      if (!firstRangeRows) return ranges.map((after) => branch(where, and(after, walkGuards[i])).limit(branchLimit));
      const enough = sql`(SELECT ${sql.identifier('n')} FROM ${firstRangeRows}) < ${branchLimit}`;
      return [branch(where, and(ranges[0], walkGuards[i])).limit(branchLimit), branch(where, and(ranges[1], walkGuards[i], enough)).limit(branchLimit)];
    };
    let branches;
    if (!walkOrRange) {
      if (paths.length === 1 && ranges.length === 1 && !narrow) return branch(paths[0]!, ranges[0]).limit(limit).offset(offsetValue);
      branches = paths.flatMap((_, i) => pathRanges(i));
    } else {
      // Per path, two alternatives; a one-time filter (evaluated once, before any row is
      // read) runs exactly one of them. Postgres estimates every path with the table's
      // overall share of matches and cannot tell a path that has none.
      branches = paths.flatMap((where, i) => {
        // Many matches: the walk in the sort's order, as above.
        const walks = pathRanges(i);
        // Few: the path's rows in the filter's range (the cursor's ranges as one condition),
        // then sorted. The subquery's LIMIT cuts nothing (this branch runs only when the
        // range holds fewer rows), but keeps Postgres from planning it as a walk of the
        // sort's index and from costing it as the table-wide share of the path (which
        // priced the statement above the JIT threshold: 45 ms of compiling).
        // q is tested on the range's rows, not intersected with the trigram index (searchOffIndex).
        const inRangeWhere = and(where, ...searchOffIndex(filter), cursor ? or(...cursor.clauses) : undefined);
        if (choice!.deferred) {
          // The window's ids and sort keys (index-only, see WINDOW_FEW_MATCHES), sorted and
          // cut to the page; then those rows only, by primary key.
          // walk-or-matches: the matches' ids from the index that tests the word (index-only),
          // then their sort keys by id; as one scan, Postgres read every row of the status
          // from the heap to test the word there (the sort key is not in that index).
          // The cursor's ranges (and the null keys' clause, withNullKeys) name the sort key,
          // which that index does not hold: tested on the matches' rows instead.
          const inRange = matchSets
            ? and(sql`${contracts.id} IN (SELECT ${sql.identifier('id')} FROM ${matchSets[i]})`, cursor ? or(...cursor.clauses) : undefined)
            : inRangeWhere;
          const keys = db
            .select({ id: contracts.id, key: sql`${SORT_KEYS[sort.field].expression}`.as('window_key') })
            .from(contracts)
            .where(inRange)
            .limit(choice!.few)
            .as('in_window');
          const windowId = sql`${sql.identifier('in_window')}.${sql.identifier('id')}`;
          const sortedKeys = db
            .select({ id: sql<string>`${windowId}`.as('id'), sortKey: sql<unknown>`${sql.identifier('window_key')}`.as('sort_key') })
            .from(keys)
            .where(sql`${matches[i]} < ${few}`)
            .orderBy(...orderTerms(sort, sql`${sql.identifier('window_key')}`, windowId))
            .limit(branchLimit);
          return [...walks, sortedKeys as unknown as (typeof walks)[number]];
        }
        const inRange = db
          .select(selection)
          .from(contracts)
          .where(inRangeWhere)
          .limit(FEW_MATCHES)
          .as('in_range');
        const sorted = db
          .select()
          .from(inRange)
          .where(sql`${matches[i]} < ${few}`)
          .orderBy(...orderTerms(sort, sql`${sql.identifier('sort_key')}`, sql`${sql.identifier('id')}`))
          .limit(branchLimit);
        return [...walks, sorted];
      });
    }
    const [first, ...rest] = branches as [(typeof branches)[number], ...typeof branches];
    const union = rest.reduce<ReturnType<typeof first.unionAll>>((q, b) => q.unionAll(b), first as never);
    const order = orderTerms(sort, sql`${sql.identifier('sort_key')}`, sql`${sql.identifier('id')}`);
    // The CTE must be in scope of every branch: a WITH on the outer select, over the union.
    // The match sets first: after_key_rows counts walks whose guards read them, and a CTE
    // sees only those listed before it.
    const ctes = [...(matchSets ?? []), ...(firstRangeRows ? [firstRangeRows] : [])];
    const pageOf = ctes.length > 0
      ? db.with(...ctes).select().from(union.as('after_cursor')).orderBy(...order).limit(limit).offset(offsetValue)
      : union.orderBy(...order).limit(limit).offset(offsetValue);
    if (!narrow) return pageOf;
    const pageIds = db.select({ id: sql`${sql.identifier('page_keys')}.${sql.identifier('id')}` }).from(pageOf.as('page_keys'));
    return db
      .select(selection)
      .from(contracts)
      .where(sql`${contracts.id} IN (${pageIds})`)
      .orderBy(...orderTerms(sort, sortKeyExpression, sql`${contracts.id}`));
  };
  const prepareOnServer = isCommonFilterShape(filter) && sort.field === DEFAULT_ORDER.field && sort.descending === DEFAULT_ORDER.descending;
  return { name, build: build as unknown as Statement<PageRow<T>[]>['build'], values, prepareOnServer };
}

/** The sorts on extracted data: the API shows them (and sorts by them) only once a contract is completed. */
const EXTRACTED_SORTS = new Set<Sort['field']>(['expiration_date', 'renewal_date', 'contract_value']);

/**
 * With a status other than `completed`, every row's key of a sort on extracted data is
 * null (expressions.ts: the key is shown only once completed), so the clause `key IS NULL`
 * changes no answer; it lets each path's walk start at the null range of the sort's index
 * instead of passing every completed contract first (nulls come last in both directions):
 * `organization_id&status=processing&sort=-renewal_date` read a whole organisation (50 ms
 * at 2M), `updated_since&status=processing&sort=-renewal_date` 85 ms. Appended after the
 * named clauses, so that their positions (`names`) are unchanged; the statement's name says so.
 */
function withNullKeys(filter: FilterShape, filters: ContractFilters, sort: Sort): FilterShape {
  if (filters.status === undefined || filters.status === 'completed' || !EXTRACTED_SORTS.has(sort.field)) return filter;
  return { ...filter, clauses: [...filter.clauses, sql`${SORT_KEYS[sort.field].expression} IS NULL`] };
}

export async function selectContractPage<T extends ContractSummaryRow = ContractSummaryRow>(
  db: Database,
  scope: CallerScope,
  filters: ContractFilters,
  page: PageRequest,
  columns: ContractColumns = summaryColumns,
): Promise<PageRow<T>[]> {
  const statement = contractPageStatement<T>(scope, filters, page, columns);
  return statement ? runStatement(db, statement) : [];
}
