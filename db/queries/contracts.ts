import { and, desc, eq, fillPlaceholders, isNull, or, sql, type SQL } from 'drizzle-orm';
import { runStatement, type Database, type PreparableQuery, type Statement } from '../client';
import { contracts, memberships, type Contract, type ContractStatus } from '../schema';

/** Who is asking: a user, and the organisations that user belongs to right now. */
export interface AccessScope {
  userId: string;
  organizationIds: readonly string[];
}

export interface ContractFilters {
  status?: ContractStatus;
  /** Must be one of the scope's organisations; the service checks that first. */
  organizationId?: string;
}

/** Position after which the next page starts, in list order (created_at desc, id desc). */
export interface Cursor {
  createdAt: Date;
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
  status: ContractStatus | undefined;
}

function accessShape(scope: AccessScope, filters: ContractFilters): AccessShape | undefined {
  const personal = filters.organizationId === undefined;
  const organizationIds =
    filters.organizationId === undefined
      ? scope.organizationIds
      : scope.organizationIds.filter((id) => id === filters.organizationId);
  if (!personal && organizationIds.length === 0) return undefined;
  return { personal, organizationIds, status: filters.status };
}

const shapeName = (shape: AccessShape) =>
  `${shape.personal ? 'p' : ''}o${shape.organizationIds.length}${shape.status ? 's' : ''}`;

function accessValues(scope: AccessScope, shape: AccessShape): Record<string, unknown> {
  const values: Record<string, unknown> = { userId: scope.userId };
  shape.organizationIds.forEach((id, i) => (values[`org${i}`] = id));
  if (shape.status) values.status = shape.status;
  return values;
}

/** One WHERE clause per access path, with placeholders (userId, org0..orgN, status). */
function accessPaths(shape: AccessShape): SQL[] {
  const statusClause = shape.status ? eq(contracts.status, sql.placeholder('status')) : undefined;
  const paths: SQL[] = [];
  if (shape.personal) {
    paths.push(and(isNull(contracts.organizationId), eq(contracts.ownerId, sql.placeholder('userId')), statusClause)!);
  }
  shape.organizationIds.forEach((_, i) => {
    paths.push(and(eq(contracts.organizationId, sql.placeholder(`org${i}`)), statusClause)!);
  });
  return paths;
}

const afterCursor = sql`(${contracts.createdAt}, ${contracts.id}) < (${sql.placeholder('afterCreatedAt')}::timestamptz, ${sql.placeholder('afterId')}::uuid)`;

/**
 * The statement of one page in list order: created_at descending, then id descending,
 * at an offset or after a cursor (keyset).
 */
export function contractPageStatement<T extends ContractSummaryRow = ContractSummaryRow>(
  scope: AccessScope,
  filters: ContractFilters,
  page: { limit: number; offset?: number; after?: Cursor },
  columns: typeof summaryColumns | typeof detailColumns = summaryColumns,
): Statement<T[]> | undefined {
  const shape = accessShape(scope, filters);
  if (!shape) return undefined;
  const offset = page.offset ?? 0;
  const values = accessValues(scope, shape);
  values.limit = page.limit;
  values.branchLimit = page.limit + offset;
  if (offset > 0) values.offset = offset;
  if (page.after) {
    values.afterCreatedAt = page.after.createdAt.toISOString();
    values.afterId = page.after.id;
  }
  const hasOffset = offset > 0;
  const hasCursor = page.after !== undefined;
  const name = `contracts_page_${columns === detailColumns ? 'detail' : 'summary'}_${shapeName(shape)}${hasOffset ? '_offset' : ''}${hasCursor ? '_after' : ''}`;
  const build = (db: Database) => {
    const paths = accessPaths(shape);
    const limit = sql.placeholder('limit');
    const offsetValue = hasOffset ? sql.placeholder('offset') : 0;
    // Each branch is ordered and cut to limit + offset rows on its own, which lets Postgres
    // walk each index in order and merge them (Merge Append) instead of sorting the whole set.
    const branch = (where: SQL) =>
      db
        .select(columns)
        .from(contracts)
        .where(and(where, hasCursor ? afterCursor : undefined))
        .orderBy(desc(contracts.createdAt), desc(contracts.id));
    if (paths.length === 1) return branch(paths[0]!).limit(limit).offset(offsetValue);
    const branches = paths.map((where) => branch(where).limit(sql.placeholder('branchLimit')));
    const [first, ...rest] = branches as [(typeof branches)[number], ...typeof branches];
    return rest
      .reduce<ReturnType<typeof first.unionAll>>((q, b) => q.unionAll(b), first as never)
      .orderBy(sql`created_at desc`, sql`id desc`)
      .limit(limit)
      .offset(offsetValue);
  };
  return { name, build: build as unknown as Statement<T[]>['build'], values };
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
  page: { limit: number; offset?: number; after?: Cursor },
  columns: typeof summaryColumns | typeof detailColumns = summaryColumns,
) {
  return filled(db, contractPageStatement(scope, filters, page, columns));
}

export async function selectContractPage<T extends ContractSummaryRow = ContractSummaryRow>(
  db: Database,
  scope: AccessScope,
  filters: ContractFilters,
  page: { limit: number; offset?: number; after?: Cursor },
  columns: typeof summaryColumns | typeof detailColumns = summaryColumns,
): Promise<T[]> {
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
  const statusClause = shape.status ? eq(contracts.status, sql.placeholder('status')) : undefined;
  const values: Record<string, unknown> = { userId: scope.userId, orgIds: [...shape.organizationIds] };
  if (shape.status) values.status = shape.status;
  const build = (db: Database) => {
    const count = sql<number>`count(*)::int`.as('n');
    const organizations = db
      .select({ n: count })
      .from(contracts)
      .where(and(sql`${contracts.organizationId} = any(${sql.placeholder('orgIds')}::uuid[])`, statusClause));
    if (!shape.personal) return organizations;
    return db
      .select({ n: count })
      .from(contracts)
      .where(and(isNull(contracts.organizationId), eq(contracts.ownerId, sql.placeholder('userId')), statusClause))
      .unionAll(organizations);
  };
  return { name: `contracts_count_${shape.personal ? 'p' : ''}${shape.status ? 's' : ''}`, build, values };
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
