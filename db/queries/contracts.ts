import { and, desc, eq, isNull, or, sql, type SQL } from 'drizzle-orm';
import type { Database } from '../client';
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
export async function organizationIdsOf(db: Database, userId: string): Promise<string[]> {
  const rows = await db
    .select({ id: memberships.organizationId })
    .from(memberships)
    .where(eq(memberships.userId, userId));
  return rows.map((r) => r.id);
}

/**
 * The access paths of a scope, one WHERE clause each: the user's personal contracts,
 * then each organisation's. Each is served in list order by its own index, so Postgres
 * merges them (Merge Append) and a page reads about limit + offset rows, never the
 * caller's whole set.
 */
function accessPaths(scope: AccessScope, filters: ContractFilters): SQL[] {
  const statusClause = filters.status ? eq(contracts.status, filters.status) : undefined;
  const paths: SQL[] = [];
  if (filters.organizationId === undefined) {
    paths.push(and(isNull(contracts.organizationId), eq(contracts.ownerId, scope.userId), statusClause)!);
  }
  for (const orgId of scope.organizationIds) {
    if (filters.organizationId !== undefined && filters.organizationId !== orgId) continue;
    paths.push(and(eq(contracts.organizationId, orgId), statusClause)!);
  }
  return paths;
}

function afterCursor(cursor: Cursor | undefined): SQL | undefined {
  if (!cursor) return undefined;
  return sql`(${contracts.createdAt}, ${contracts.id}) < (${cursor.createdAt.toISOString()}::timestamptz, ${cursor.id}::uuid)`;
}

/**
 * The query of one page in list order: created_at descending, then id descending.
 * Returned unexecuted so that tools can print or EXPLAIN the exact statement.
 */
export function contractPageQuery(
  db: Database,
  scope: AccessScope,
  filters: ContractFilters,
  page: { limit: number; offset?: number; after?: Cursor },
  columns: typeof summaryColumns | typeof detailColumns = summaryColumns,
) {
  const paths = accessPaths(scope, filters);
  if (paths.length === 0) return undefined;
  const cursor = afterCursor(page.after);
  const offset = page.offset ?? 0;
  // Each branch is ordered and cut to limit + offset rows on its own, which lets Postgres
  // walk each index in order and merge them (Merge Append) instead of sorting the whole set.
  const branch = (where: SQL) =>
    db.select(columns).from(contracts).where(and(where, cursor)).orderBy(desc(contracts.createdAt), desc(contracts.id));
  if (paths.length === 1) return branch(paths[0]!).limit(page.limit).offset(offset);
  const branches = paths.map((where) => branch(where).limit(page.limit + offset));
  const [first, ...rest] = branches as [(typeof branches)[number], ...typeof branches];
  return rest
    .reduce<ReturnType<typeof first.unionAll>>((q, branch) => q.unionAll(branch), first as never)
    .orderBy(sql`created_at desc`, sql`id desc`)
    .limit(page.limit)
    .offset(offset);
}

export async function selectContractPage<T extends ContractSummaryRow = ContractSummaryRow>(
  db: Database,
  scope: AccessScope,
  filters: ContractFilters,
  page: { limit: number; offset?: number; after?: Cursor },
  columns: typeof summaryColumns | typeof detailColumns = summaryColumns,
): Promise<T[]> {
  const query = contractPageQuery(db, scope, filters, page, columns);
  if (!query) return [];
  const rows: unknown = await query;
  return rows as T[];
}

/** The count query: one count per access path (each can be answered from its index). */
export function contractCountQuery(db: Database, scope: AccessScope, filters: ContractFilters) {
  const paths = accessPaths(scope, filters);
  if (paths.length === 0) return undefined;
  const counts = paths.map((where) =>
    db.select({ n: sql<number>`count(*)::int`.as('n') }).from(contracts).where(where),
  );
  const [first, ...rest] = counts as [(typeof counts)[number], ...typeof counts];
  return rest.reduce<ReturnType<typeof first.unionAll>>((q, c) => q.unionAll(c), first as never);
}

/** How many contracts of the scope match the filters. */
export async function countContracts(db: Database, scope: AccessScope, filters: ContractFilters): Promise<number> {
  const query = contractCountQuery(db, scope, filters);
  if (!query) return 0;
  const rows = await query;
  return rows.reduce((sum, r) => sum + Number(r.n), 0);
}

/** One contract, if the scope may see it; a single query whatever the answer. */
export async function selectContract(
  db: Database,
  scope: AccessScope,
  id: string,
): Promise<ContractDetailRow | undefined> {
  const visible = or(
    and(isNull(contracts.organizationId), eq(contracts.ownerId, scope.userId)),
    scope.organizationIds.length > 0
      ? sql`${contracts.organizationId} in ${scope.organizationIds}`
      : undefined,
  );
  const [row] = await db.select(detailColumns).from(contracts).where(and(eq(contracts.id, id), visible)).limit(1);
  return row as ContractDetailRow | undefined;
}
