/**
 * An optional wrapper around every statement this layer runs, set by server/ when tracing
 * is on (server/observability/tracing.ts). db/ imports nothing of server/, so the span
 * itself is written there and only called from here.
 *
 * Kept on globalThis: Next.js may load db/client.ts once per bundle (the instrumentation
 * hook's, each route's), and one setting must reach them all.
 */

/** What a hook may learn of a statement: never its parameters, never its text. */
export interface StatementInfo {
  /** The statement's name (db/queries), or undefined for one written in place. */
  name: string | undefined;
  /** SELECT, INSERT, UPDATE, DELETE, WITH ... (the first keyword of its SQL). */
  operation: string;
}

export type StatementHook = <T>(statement: StatementInfo, run: () => Promise<T>) => Promise<T>;

const HOOK = Symbol.for('contract-data-api.statement-hook');
type WithHook = typeof globalThis & { [HOOK]?: StatementHook };

export function setStatementHook(hook: StatementHook | undefined): void {
  (globalThis as WithHook)[HOOK] = hook;
}

/** The hook, or undefined (the usual case: tracing off), checked on every statement. */
export function statementHook(): StatementHook | undefined {
  return (globalThis as WithHook)[HOOK];
}

/**
 * The operation of a statement from its SQL text: its first keyword, upper case; for a
 * data-modifying CTE (WITH ... INSERT/UPDATE/DELETE) the verb of the outer statement.
 */
export function operationOf(sqlText: string): string {
  // A union of selects starts with a parenthesis: "(select ...) union all (select ...)".
  const first = /^[\s(]*(\w+)/.exec(sqlText)?.[1]?.toUpperCase() ?? 'UNKNOWN';
  if (first !== 'WITH') return first;
  // The outer statement comes after the last CTE's closing parenthesis.
  let outer = 'WITH';
  for (const match of sqlText.matchAll(/\)\s*(select|insert|update|delete|merge)\b/gi)) outer = match[1]!.toUpperCase();
  return outer;
}
