import { fillPlaceholders } from 'drizzle-orm';
import type { Database, Statement } from '@/db/client';
import type { CallerScope } from '@/db/queries/access';
import { contractStatement } from '@/db/queries/contracts/by-id';
import { detailColumns, summaryColumns } from '@/db/queries/contracts/columns';
import { contractCountStatement } from '@/db/queries/contracts/count';
import type { ContractFilters } from '@/db/queries/contracts/filters';
import { contractPageStatement, type Cursor } from '@/db/queries/contracts/page';
import { membershipsStatement } from '@/db/queries/memberships';
import { tokenByHashStatement } from '@/db/queries/tokens';

/**
 * The app's SQL, taken from its own statement builders (db/queries/*), so that the floor
 * and the EXPLAIN step run exactly what the app sends and cannot drift from it. A
 * statement's text depends only on its name: it is built once with Drizzle's `.toSQL()`
 * and cached; per request only the placeholder values are filled in.
 */

export interface Compiled {
  name: string;
  text: string;
  params: unknown[];
}

export class StatementTexts {
  private readonly texts = new Map<string, { text: string; params: unknown[] }>();

  constructor(private readonly db: Database) {}

  compile(statement: Statement<unknown>): Compiled {
    let entry = this.texts.get(statement.name);
    if (!entry) {
      const { sql, params } = statement.build(this.db).toSQL();
      entry = { text: sql, params };
      this.texts.set(statement.name, entry);
    }
    return { name: statement.name, text: entry.text, params: fillPlaceholders(entry.params as never[], statement.values) };
  }
}

/** The statements of one request kind, in the order the app runs them. */
export const requestStatements = {
  keyByHash: (hash: string) => tokenByHashStatement('api_key', hash) as Statement<unknown>,
  memberships: (userId: string) => membershipsStatement(userId) as Statement<unknown>,
  page: (scope: CallerScope, filters: ContractFilters, page: { limit: number; offset?: number; after?: Cursor }) =>
    contractPageStatement(scope, filters, page, summaryColumns) as Statement<unknown> | undefined,
  count: (scope: CallerScope, filters: ContractFilters) => contractCountStatement(scope, filters) as Statement<unknown> | undefined,
  exportPage: (scope: CallerScope, filters: ContractFilters, page: { limit: number; after?: Cursor }) =>
    contractPageStatement(scope, filters, page, detailColumns) as Statement<unknown> | undefined,
  contract: (scope: CallerScope, id: string) => contractStatement(scope, id) as Statement<unknown>,
};
