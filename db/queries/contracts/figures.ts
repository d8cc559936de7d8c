import { and, sql, type SQL } from 'drizzle-orm';
import { runStatement, type Database, type Statement } from '../../client';
import { contractCounts, contractDateCounts, contracts, contractUpdatedCounts } from '../../schema';
import { accessPaths, accessPathValues, accessShapeName, counterPathKeys, type AccessShape, type CallerScope } from '../access';
import { isStale, type DateWindow } from './expressions';
import { filterClauses, filterShapeName, FILTERS, type FilterName, type FilterShape } from './filters';
import type { Choice, FigureNeeds, Figures, SearchRange } from './plan';

/** The per-day counters' kind of each date (contract_date_counts; the stored dates of a rolling one). */
export const COUNTER_KIND: Record<DateWindow, 'e' | 'r' | 'n'> = { expiration: 'e', renewal: 'r', notice: 'n' };

/**
 * The caller's figures a list plan needs (plan.ts, figuresNeeded), all in one statement of
 * scalar subqueries, one per access path and figure: counter sums (a dozen rows a path
 * whatever it holds) or a count capped at the choice's threshold (index-only). A rolling
 * date's counters hold the stored dates: a figure can be off by the rows the job has not
 * rolled yet, which only chooses how a path is read, never what it answers.
 */

/** Each path's rows in a date window, summed from the per-day counters (contract_date_counts). */
function windowCounters(shape: AccessShape, date: DateWindow, bounds: readonly FilterName[]): SQL[] {
  const t = contractDateCounts;
  const kind = sql.raw(`'${COUNTER_KIND[date]}'`);
  const dayBounds = bounds.map((name) => sql`${t.day} ${sql.raw(FILTERS[name].window!.bound === 'from' ? '>=' : '<=')} ${sql.placeholder(name)}::date`);
  return counterPathKeys(shape).map(
    ({ personal, id }) =>
      sql`(SELECT coalesce(sum(${t.n}), 0) FROM ${t} WHERE ${and(sql`${t.scopeId} = ${id}`, sql`${t.personal} = ${sql.raw(String(personal))}`, sql`${t.kind} = ${kind}`, ...dayBounds)})`,
  );
}

/**
 * Each path's rows updated since `updatedSince`, at most: the per-day counters of
 * updated_at (contract_updated_counts) from since's UTC day on, the whole of that day included.
 */
function updatedCounters(shape: AccessShape): SQL[] {
  const t = contractUpdatedCounts;
  const sinceDay = sql`(${sql.placeholder('updatedSince')}::timestamptz AT TIME ZONE 'UTC')::date`;
  return counterPathKeys(shape).map(
    ({ personal, id }) =>
      sql`(SELECT coalesce(sum(${t.n}), 0) FROM ${t} WHERE ${and(sql`${t.scopeId} = ${id}`, sql`${t.personal} = ${sql.raw(String(personal))}`, sql`${t.day} >= ${sinceDay}`)})`,
  );
}

/** Each path's contracts, from its counters (contract_counts). */
function pathCounters(shape: AccessShape): SQL[] {
  const t = contractCounts;
  return counterPathKeys(shape).map(
    ({ personal, id }) => sql`(SELECT coalesce(sum(${t.n}), 0) FROM ${t} WHERE ${and(sql`${t.scopeId} = ${id}`, sql`${t.personal} = ${sql.raw(String(personal))}`)})`,
  );
}

/**
 * Each path's matches counted up to `few`, with their ids when fewer (`n` or `n:{id,…}`):
 * the page then reads them by id and the word is not looked for again.
 */
function cappedMatches(shape: AccessShape, clauses: SQL[], few: number): SQL[] {
  const cap = sql.raw(String(few));
  return accessPaths(shape).map(
    (where) =>
      sql`(SELECT count(*)::text || CASE WHEN count(*) < ${cap} THEN ':' || coalesce(array_agg(id)::text, '{}') ELSE '' END FROM (SELECT ${contracts.id} AS id FROM ${contracts} WHERE ${and(where, ...clauses)} LIMIT ${cap}) AS matches)`,
  );
}

/** Each path's rows under `clauses`, counted up to `few` (an index range, stopped there). */
function cappedCounts(shape: AccessShape, clauses: SQL[], few: number): SQL[] {
  const cap = sql.raw(String(few));
  return accessPaths(shape).map((where) => sql`(SELECT count(*) FROM (SELECT 1 FROM ${contracts} WHERE ${and(where, ...clauses)} LIMIT ${cap}) AS matches)`);
}

/** Whether any path has a stale row (expressions.ts, isStale): one probe of its rolling index each. */
function staleProbe(shape: AccessShape): SQL {
  const probes = accessPaths(shape).map((where) => sql`EXISTS (SELECT 1 FROM ${contracts} WHERE ${and(where, isStale)})`);
  return sql`(${sql.join(probes, sql` OR `)})`;
}

function choiceFigures(shape: AccessShape, filter: FilterShape, choice: Choice): SQL[] {
  if (choice.kind === 'window') return windowCounters(shape, choice.date, choice.bounds);
  // updated_since: its range alone (its index, index-only); any other filter only removes rows from it.
  if (choice.kind === 'range') return cappedCounts(shape, filterClauses(filter, ['updatedSince']), choice.few);
  // q with a status other than completed: the matches, on the entries of the status's index that holds the search text.
  return cappedMatches(shape, filterClauses(filter), choice.few);
}

function searchRangeFigures(shape: AccessShape, range: SearchRange): SQL[] {
  if (range.kind === 'window') return windowCounters(shape, range.date, range.bounds);
  return range.kind === 'updated' ? updatedCounters(shape) : pathCounters(shape);
}

const needsName = (needs: FigureNeeds) =>
  // The window's date too: with both windows, the sort decides which one the choice counts (two texts, one name otherwise).
  [
    needs.choice ? `choice:${needs.choice.kind}${needs.choice.kind === 'window' ? `:${needs.choice.date}` : ''}` : '',
    needs.searchRange ? `search-range:${needs.searchRange.kind}${needs.searchRange.kind === 'window' ? `:${needs.searchRange.date}` : ''}` : '',
    needs.stale ? 'stale-probe' : '',
  ]
    .filter(Boolean)
    .join(' ');

/** The statement of a plan's figures; undefined when the plan needs none. */
export function figuresStatement(scope: CallerScope, shape: AccessShape, filter: FilterShape, needs: FigureNeeds): Statement<Record<string, number | string>[]> | undefined {
  if (!needs.choice && !needs.searchRange && !needs.stale) return undefined;
  const build = (db: Database) => {
    const columns: Record<string, SQL.Aliased<number | string>> = {};
    if (needs.choice) choiceFigures(shape, filter, needs.choice).forEach((q, i) => (columns[`r${i}`] = sql<number | string>`${q}`.as(`r${i}`)));
    if (needs.searchRange) searchRangeFigures(shape, needs.searchRange).forEach((q, i) => (columns[`s${i}`] = sql<number | string>`${q}`.as(`s${i}`)));
    if (needs.stale) columns.stale = sql<number | string>`${staleProbe(shape)}::int`.as('stale');
    return db.select(columns).from(sql`(VALUES (1)) AS one (x)`);
  };
  return {
    name: ['contracts.figures', accessShapeName(shape), filterShapeName(filter), needsName(needs)].join(' '),
    build: build as unknown as Statement<Record<string, number | string>[]>['build'],
    values: { ...accessPathValues(scope, shape), ...filter.values },
    prepareOnServer: false,
  };
}

/** Reads the figures: per path, in accessPaths() order. */
export async function readFigures(db: Database, scope: CallerScope, shape: AccessShape, filter: FilterShape, needs: FigureNeeds): Promise<Figures> {
  const statement = figuresStatement(scope, shape, filter, needs);
  if (!statement) return {};
  const [row] = await runStatement(db, statement);
  const paths = counterPathKeys(shape).length;
  const column = (prefix: string) => Array.from({ length: paths }, (_, i) => String(row![`${prefix}${i}`]));
  const figures: { -readonly [K in keyof Figures]: Figures[K] } = {};
  if (needs.searchRange) figures.searchRange = column('s').map(Number);
  if (needs.stale) figures.staleRows = Number(row!.stale) === 1;
  if (needs.choice?.kind === 'matches') {
    // "n" or "n:{id,id,…}" (Postgres's array text of uuids: no quoting).
    const parsed = column('r').map((text) => {
      const at = text.indexOf(':');
      return at < 0 ? { n: Number(text) } : { n: Number(text.slice(0, at)), ids: text.slice(at + 2, -1).split(',').filter(Boolean) };
    });
    figures.inRange = parsed.map((p) => p.n);
    figures.matchIds = parsed.map((p) => p.ids);
  } else if (needs.choice) figures.inRange = column('r').map(Number);
  return figures;
}
