/**
 * What watches the statements the app sends: a span per statement (server/observability/
 * tracing.ts, when tracing is on) and the statements in flight per pool and the statement
 * timeouts (server/observability/metrics.ts, when metrics are on). db/ imports nothing of
 * server/, so server/ sets them here and db/client.ts calls them, at one place below
 * Drizzle: the postgres.js client's `unsafe` (and that of each transaction) and PGlite's
 * `query`, which every statement of the app goes through (Drizzle's builders, its
 * transactions, prepared statements, `execute`, migrations, tools' raw queries).
 *
 * Kept on globalThis: Next.js may load db/client.ts once per bundle (the instrumentation
 * hook's, each route's), and one setting must reach them all.
 */

/** What a hook may learn of a statement: never its parameters, never its text. */
export interface StatementInfo {
  /** The statement's name (db/queries, through runStatement), or undefined for any other. */
  name: string | undefined;
  /** SELECT, INSERT, UPDATE, DELETE, WITH ... (the first keyword of its SQL). */
  operation: string;
  /** The table the statement reads or writes first (its FROM, INTO or UPDATE), when the text names one. */
  collection: string | undefined;
}

/** Told that a statement starts; returns what to call when it ends (with its error), or undefined to watch no further. */
export type StatementHook = (statement: StatementInfo) => ((error?: unknown) => void) | undefined;
/** Told that a statement starts on `db` (db/client.ts's Database: this module imports nothing of it); returns what to call when it ends. */
export type StatementObserver = (db: object) => (error?: unknown) => void;

const HOOK = Symbol.for('contract-data-api.statement-hook');
const OBSERVER = Symbol.for('contract-data-api.statement-observer');
type WithHooks = typeof globalThis & { [HOOK]?: StatementHook; [OBSERVER]?: StatementObserver };

export function setStatementHook(hook: StatementHook | undefined): void {
  (globalThis as WithHooks)[HOOK] = hook;
}

/** The hook, or undefined (the usual case: tracing off), checked on every statement. */
export function statementHook(): StatementHook | undefined {
  return (globalThis as WithHooks)[HOOK];
}

export function observeStatements(observer: StatementObserver | undefined): void {
  (globalThis as WithHooks)[OBSERVER] = observer;
}

/** The observer, or undefined (metrics off), checked on every statement. */
export function statementObserver(): StatementObserver | undefined {
  return (globalThis as WithHooks)[OBSERVER];
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

/**
 * The first table a statement names after FROM, INTO or UPDATE (Drizzle quotes its
 * identifiers), or undefined: a name of the schema, never a value.
 */
export function collectionOf(sqlText: string): string | undefined {
  return /\b(?:from|into|update)\s+"([A-Za-z_][A-Za-z0-9_]*)"/i.exec(sqlText)?.[1];
}

// What each SQL text is, worked out once: Drizzle sends the same text for the same shape.
const NAMES = Symbol.for('contract-data-api.statement-names');
const INFOS = Symbol.for('contract-data-api.statement-infos');
type WithMaps = typeof globalThis & { [NAMES]?: Map<string, string>; [INFOS]?: Map<string, StatementInfo> };
const names: Map<string, string> = ((globalThis as WithMaps)[NAMES] ??= new Map());
const infos: Map<string, StatementInfo> = ((globalThis as WithMaps)[INFOS] ??= new Map());
// Texts are bounded by the shapes of the queries; the bound only guards against a pathological caller.
const MAX_TEXTS = 2000;

/** Names the statement whose SQL text is `sqlText` (runStatement, when it prepares one). */
export function nameStatement(sqlText: string, name: string): void {
  if (names.get(sqlText) === name) return;
  if (names.size >= MAX_TEXTS) names.clear();
  names.set(sqlText, name);
  infos.delete(sqlText);
}

/** What the hooks learn of the statement `sqlText`. */
export function statementInfoOf(sqlText: string): StatementInfo {
  let info = infos.get(sqlText);
  if (!info) {
    if (infos.size >= MAX_TEXTS) infos.clear();
    info = { name: names.get(sqlText), operation: operationOf(sqlText), collection: collectionOf(sqlText) };
    infos.set(sqlText, info);
  }
  return info;
}

/** What to call when a statement on `db` ends, or undefined when nothing watches statements (tracing and metrics off). */
export function statementStarted(db: object | undefined, sqlText: string): ((error?: unknown) => void) | undefined {
  const hook = statementHook();
  const observer = statementObserver();
  if (!hook && !observer) return undefined;
  const traced = hook?.(statementInfoOf(sqlText));
  const counted = db && observer?.(db);
  if (!traced) return counted;
  if (!counted) return traced;
  return (error) => {
    traced(error);
    counted(error);
  };
}

/** `query` (a promise, or postgres.js's lazy query) with `done` called when it settles; the same object is returned. */
export function watched<Q extends PromiseLike<unknown>>(query: Q, done: (error?: unknown) => void): Q {
  // Promise.prototype.then, not the query's own: postgres.js's `then` would send the
  // query at once, before Drizzle has said how it wants the rows (`.values()`).
  Promise.prototype.then.call(
    query,
    () => done(),
    (error: unknown) => done(error),
  );
  return query;
}
