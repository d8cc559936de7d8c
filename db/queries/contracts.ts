import { and, eq, fillPlaceholders, isNull, or, sql, type SQL } from 'drizzle-orm';
import { runStatement, type Database, type PreparableQuery, type Statement } from '../client';
import { contracts, memberships, type Contract, type ContractStatus } from '../schema';
import {
  containsPattern,
  DEFAULT_ORDER,
  orderTerms,
  searchText,
  SORT_KEYS,
  visibleExpirationDate,
  visibleRenewalDate,
  type Sort,
} from './contract-expressions';

/** Who is asking: a user, and the organisations that user belongs to right now. */
export interface AccessScope {
  userId: string;
  organizationIds: readonly string[];
}

export interface ContractFilters {
  status?: ContractStatus;
  /** Must be one of the scope's organisations; the service checks that first. */
  organizationId?: string;
  /** Inclusive bounds (YYYY-MM-DD) on the expiration date the API shows. */
  expirationFrom?: string;
  expirationTo?: string;
  /** Inclusive bounds (YYYY-MM-DD) on the renewal date the API shows. */
  renewalFrom?: string;
  renewalTo?: string;
  autoRenewal?: boolean;
  /** Text searched in the title and the parties, case-insensitively. */
  search?: string;
  /** Updated at or after this instant (ISO 8601 with a time zone, as the client wrote it). */
  updatedSince?: string;
  /** Expires or renews on or after this date (the calendar feed's window; not an API parameter). */
  datesFrom?: string;
}

/** Position after which the next page starts, in the order of the sort: the last row's key (as text) and id. */
export interface Cursor {
  key: string | null;
  id: string;
}

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
  contractValue: contracts.contractValue,
  currency: contracts.currency,
  provider: contracts.provider,
  client: contracts.client,
  summary: contracts.summary,
  confidenceScore: contracts.confidenceScore,
};

export type ContractSummaryRow = Pick<Contract, keyof typeof summaryColumns>;
export type ContractDetailRow = Pick<Contract, keyof typeof detailColumns>;

/** The organisations a user belongs to, read at request time (no cache: removal is immediate). */
export function membershipsStatement(userId: string): Statement<{ id: string }[]> {
  return {
    name: 'memberships_of_user',
    build: (db) =>
      db
        .select({ id: memberships.organizationId })
        .from(memberships)
        .where(eq(memberships.userId, sql.placeholder('userId'))),
    values: { userId },
  };
}

export async function organizationIdsOf(db: Database, userId: string): Promise<string[]> {
  const rows = await runStatement(db, membershipsStatement(userId));
  return rows.map((r) => r.id);
}

/**
 * The access paths of a scope: the user's personal contracts, then each organisation's
 * (only the filtered one when an organisation filter is given). Each is served in list
 * order by its own index, so Postgres merges them (Merge Append) and a page reads about
 * limit + offset rows, never the caller's whole set.
 */
interface AccessShape {
  personal: boolean;
  organizationIds: readonly string[];
}

function accessShape(scope: AccessScope, filters: ContractFilters): AccessShape | undefined {
  const personal = filters.organizationId === undefined;
  const organizationIds =
    filters.organizationId === undefined
      ? scope.organizationIds
      : scope.organizationIds.filter((id) => id === filters.organizationId);
  if (!personal && organizationIds.length === 0) return undefined;
  return { personal, organizationIds };
}

/**
 * The filters other than the organisation, each a clause with placeholders, keyed by a
 * letter: a statement's name lists the letters of the filters it has, because its SQL
 * text (and so its prepared plan) depends on which are present, never on their values.
 */
interface FilterClause {
  letter: string;
  /** The placeholder the clause reads. */
  param: string;
  clause: SQL;
  value: (f: ContractFilters) => unknown;
}

const FILTER_CLAUSES: FilterClause[] = [
  { letter: 's', param: 'status', clause: eq(contracts.status, sql.placeholder('status')), value: (f) => f.status },
  { letter: 'e', param: 'expirationFrom', clause: sql`${visibleExpirationDate} >= ${sql.placeholder('expirationFrom')}::date`, value: (f) => f.expirationFrom },
  { letter: 'E', param: 'expirationTo', clause: sql`${visibleExpirationDate} <= ${sql.placeholder('expirationTo')}::date`, value: (f) => f.expirationTo },
  { letter: 'r', param: 'renewalFrom', clause: sql`${visibleRenewalDate} >= ${sql.placeholder('renewalFrom')}::date`, value: (f) => f.renewalFrom },
  { letter: 'R', param: 'renewalTo', clause: sql`${visibleRenewalDate} <= ${sql.placeholder('renewalTo')}::date`, value: (f) => f.renewalTo },
  {
    letter: 'a',
    param: 'autoRenewal',
    clause: sql`(${contracts.status} = 'completed' AND ${contracts.autoRenewal} = ${sql.placeholder('autoRenewal')}::boolean)`,
    value: (f) => f.autoRenewal,
  },
  {
    letter: 'q',
    param: 'search',
    clause: sql`${searchText} ILIKE ${sql.placeholder('search')}`,
    value: (f) => (f.search === undefined ? undefined : containsPattern(f.search)),
  },
  {
    letter: 'w',
    param: 'datesFrom',
    clause: sql`(${visibleExpirationDate} >= ${sql.placeholder('datesFrom')}::date OR ${visibleRenewalDate} >= ${sql.placeholder('datesFrom')}::date)`,
    value: (f) => f.datesFrom,
  },
  {
    letter: 'u',
    param: 'updatedSince',
    clause: sql`${contracts.updatedAt} >= ${sql.placeholder('updatedSince')}::timestamptz`,
    value: (f) => f.updatedSince,
  },
];

function filterShape(filters: ContractFilters) {
  const present = FILTER_CLAUSES.filter((c) => c.value(filters) !== undefined);
  const values = Object.fromEntries(present.map((c) => [c.param, c.value(filters)]));
  return { letters: present.map((c) => c.letter).join(''), clauses: present.map((c) => c.clause), values };
}

const shapeName = (shape: AccessShape, filterLetters: string) =>
  `${shape.personal ? 'p' : ''}o${shape.organizationIds.length}${filterLetters ? `_${filterLetters}` : ''}`;

/** One WHERE clause per access path, with placeholders (userId, org0..orgN). */
function accessPaths(shape: AccessShape): SQL[] {
  const paths: SQL[] = [];
  if (shape.personal) paths.push(and(isNull(contracts.organizationId), eq(contracts.ownerId, sql.placeholder('userId')))!);
  shape.organizationIds.forEach((_, i) => paths.push(eq(contracts.organizationId, sql.placeholder(`org${i}`))));
  return paths;
}

/**
 * Rows after the cursor in the sort's order. A nullable key has three cases: after a
 * non-null key come the larger (or smaller) keys, the same key with a later id, then
 * every null; after a null key only nulls with a later id remain.
 */
function afterCursor(sort: Sort, cursor: Cursor): { name: string; clause: SQL; values: Record<string, unknown> } {
  const key = SORT_KEYS[sort.field];
  const op = sql.raw(sort.descending ? '<' : '>');
  const afterId = sql`${sql.placeholder('afterId')}::uuid`;
  if (cursor.key === null) {
    return { name: 'after_null', clause: sql`(${key.expression} IS NULL AND ${contracts.id} ${op} ${afterId})`, values: { afterId: cursor.id } };
  }
  const afterKey = sql`${sql.placeholder('afterKey')}::${sql.raw(key.type)}`;
  const rowAfter = sql`(${key.expression}, ${contracts.id}) ${op} (${afterKey}, ${afterId})`;
  return {
    name: 'after',
    clause: key.nullable ? sql`(${rowAfter} OR ${key.expression} IS NULL)` : rowAfter,
    values: { afterKey: cursor.key, afterId: cursor.id },
  };
}

export interface PageRequest {
  limit: number;
  offset?: number;
  after?: Cursor;
  sort?: Sort;
}

/** Selected with every page: the sort key, typed (to merge the branches) and as text (for a cursor). */
function sortColumns(sort: Sort) {
  const key = SORT_KEYS[sort.field].expression;
  return { sortKey: sql<unknown>`${key}`.as('sort_key'), sortKeyText: sql<string | null>`(${key})::text`.as('sort_key_text') };
}

export type PageRow<T> = T & { sortKeyText: string | null };

/**
 * The statement of one page in the sort's order (default: created_at descending, then id
 * descending), at an offset or after a cursor (keyset).
 */
export function contractPageStatement<T extends ContractSummaryRow = ContractSummaryRow>(
  scope: AccessScope,
  filters: ContractFilters,
  page: PageRequest,
  columns: typeof summaryColumns | typeof detailColumns = summaryColumns,
): Statement<PageRow<T>[]> | undefined {
  const shape = accessShape(scope, filters);
  if (!shape) return undefined;
  const sort = page.sort ?? DEFAULT_ORDER;
  const offset = page.offset ?? 0;
  const filter = filterShape(filters);
  const cursor = page.after ? afterCursor(sort, page.after) : undefined;
  const values: Record<string, unknown> = { ...accessValues(scope, shape), ...filter.values, ...cursor?.values };
  values.limit = page.limit;
  values.branchLimit = page.limit + offset;
  const hasOffset = offset > 0;
  if (hasOffset) values.offset = offset;
  const sortName = `${sort.descending ? 'd' : 'a'}_${sort.field}`;
  const name = `contracts_page_${columns === detailColumns ? 'detail' : 'summary'}_${shapeName(shape, filter.letters)}_${sortName}${hasOffset ? '_offset' : ''}${cursor ? `_${cursor.name}` : ''}`;
  const build = (db: Database) => {
    const paths = accessPaths(shape);
    const limit = sql.placeholder('limit');
    const offsetValue = hasOffset ? sql.placeholder('offset') : 0;
    const selection = { ...columns, ...sortColumns(sort) };
    // Each branch is ordered and cut to limit + offset rows on its own, which lets Postgres
    // walk each index in order and merge them (Merge Append) instead of sorting the whole set.
    const branch = (where: SQL) =>
      db
        .select(selection)
        .from(contracts)
        .where(and(where, ...filter.clauses, cursor?.clause))
        .orderBy(...orderTerms(sort, SORT_KEYS[sort.field].expression, sql`${contracts.id}`));
    if (paths.length === 1) return branch(paths[0]!).limit(limit).offset(offsetValue);
    const branches = paths.map((where) => branch(where).limit(sql.placeholder('branchLimit')));
    const [first, ...rest] = branches as [(typeof branches)[number], ...typeof branches];
    return rest
      .reduce<ReturnType<typeof first.unionAll>>((q, b) => q.unionAll(b), first as never)
      .orderBy(...orderTerms(sort, sql`${sql.identifier('sort_key')}`, sql`${sql.identifier('id')}`))
      .limit(limit)
      .offset(offsetValue);
  };
  // The spec's own shapes (status and organisation filters, newest first) are prepared on
  // the server; the renewal filters and other sorts are too many combinations for that.
  const prepareOnServer = isCommonShape(filter.letters) && sort.field === DEFAULT_ORDER.field && sort.descending === DEFAULT_ORDER.descending;
  return { name, build: build as unknown as Statement<PageRow<T>[]>['build'], values, prepareOnServer };
}

const isCommonShape = (filterLetters: string) => filterLetters === '' || filterLetters === 's';

function accessValues(scope: AccessScope, shape: AccessShape): Record<string, unknown> {
  const values: Record<string, unknown> = { userId: scope.userId };
  shape.organizationIds.forEach((id, i) => (values[`org${i}`] = id));
  return values;
}

/** A statement with its placeholders filled, for tools that print or EXPLAIN it. */
function filled(db: Database, statement: Statement<unknown> | undefined) {
  if (!statement) return undefined;
  return {
    toSQL() {
      const { sql: text, params } = statement.build(db).toSQL();
      return { sql: text, params: fillPlaceholders(params, statement.values) };
    },
  };
}

/** The query of one page, returned unexecuted so that tools can print or EXPLAIN the exact statement. */
export function contractPageQuery(
  db: Database,
  scope: AccessScope,
  filters: ContractFilters,
  page: PageRequest,
  columns: typeof summaryColumns | typeof detailColumns = summaryColumns,
) {
  return filled(db, contractPageStatement(scope, filters, page, columns));
}

export async function selectContractPage<T extends ContractSummaryRow = ContractSummaryRow>(
  db: Database,
  scope: AccessScope,
  filters: ContractFilters,
  page: PageRequest,
  columns: typeof summaryColumns | typeof detailColumns = summaryColumns,
): Promise<PageRow<T>[]> {
  const statement = contractPageStatement<T>(scope, filters, page, columns);
  return statement ? runStatement(db, statement) : [];
}

/**
 * The count statement: one count for the personal path and one for all organisations at
 * once (organization_id = ANY($orgs)). Each is an index-only scan of a narrow index on
 * (owner_id, status) or (organization_id, status), whose B-tree deduplication packs a
 * path's entries into a few pages, and the statement's text does not depend on the
 * number of organisations. With a status filter the same indexes bound the scan to that
 * status.
 */
export function contractCountStatement(scope: AccessScope, filters: ContractFilters): Statement<{ n: number }[]> | undefined {
  const shape = accessShape(scope, filters);
  if (!shape) return undefined;
  const filter = filterShape(filters);
  const values: Record<string, unknown> = { userId: scope.userId, orgIds: [...shape.organizationIds], ...filter.values };
  const build = (db: Database) => {
    const count = sql<number>`count(*)::int`.as('n');
    const organizations = db
      .select({ n: count })
      .from(contracts)
      .where(and(sql`${contracts.organizationId} = any(${sql.placeholder('orgIds')}::uuid[])`, ...filter.clauses));
    if (!shape.personal) return organizations;
    return db
      .select({ n: count })
      .from(contracts)
      .where(and(isNull(contracts.organizationId), eq(contracts.ownerId, sql.placeholder('userId')), ...filter.clauses))
      .unionAll(organizations);
  };
  return {
    name: `contracts_count_${shape.personal ? 'p' : ''}${filter.letters ? `_${filter.letters}` : ''}`,
    build,
    values,
    prepareOnServer: isCommonShape(filter.letters),
  };
}

export function contractCountQuery(db: Database, scope: AccessScope, filters: ContractFilters) {
  return filled(db, contractCountStatement(scope, filters));
}

/** How many contracts of the scope match the filters. */
export async function countContracts(db: Database, scope: AccessScope, filters: ContractFilters): Promise<number> {
  const statement = contractCountStatement(scope, filters);
  if (!statement) return 0;
  const rows = await runStatement(db, statement);
  return rows.reduce((sum, r) => sum + Number(r.n), 0);
}

/** One contract, if the scope may see it; a single query whatever the answer. */
export function contractStatement(scope: AccessScope, id: string): Statement<ContractDetailRow[]> {
  return {
    name: 'contract_by_id',
    build: (db) =>
      db
        .select(detailColumns)
        .from(contracts)
        .where(
          and(
            eq(contracts.id, sql.placeholder('id')),
            or(
              and(isNull(contracts.organizationId), eq(contracts.ownerId, sql.placeholder('userId'))),
              sql`${contracts.organizationId} = any(${sql.placeholder('orgIds')}::uuid[])`,
            ),
          ),
        )
        .limit(1) as unknown as PreparableQuery<ContractDetailRow[]>,
    values: { id, userId: scope.userId, orgIds: [...scope.organizationIds] },
  };
}

export async function selectContract(
  db: Database,
  scope: AccessScope,
  id: string,
): Promise<ContractDetailRow | undefined> {
  const [row] = await runStatement(db, contractStatement(scope, id));
  return row;
}
