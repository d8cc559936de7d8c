import { and, asc, inArray, sql } from 'drizzle-orm';
import { executeRows, runStatement, type Database, type Statement } from '../client';
import { eventListHorizon, webhookEvents } from '../schema';
import { accessPathValues, accessShapeName, accessShape, eventListPaths, type AccessShape, type CallerScope } from './access';
import type { KeyReachChange } from './token-scope';

/**
 * The event list (migration 0021): the events about contracts a caller may see, in the
 * order of their positions, which their transactions' commits gave them in commit order.
 * A reader that has seen position p never meets a smaller one later, so "after p" is an
 * exact resumption point (a cursor) whatever the writers did meanwhile.
 */
export interface ListedEvent {
  position: number;
  id: string;
  type: string;
  occurredAt: Date;
  contractId: string | null;
  organizationId: string | null;
  /** The contract row as the event saw it (to_jsonb of the row; a deletion: id and organization_id). */
  contract: unknown;
  /** changed_fields of an update. */
  extra: unknown;
}

const eventColumns = {
  position: sql<number>`${webhookEvents.position}`.mapWith(Number).as('position'),
  id: webhookEvents.id,
  type: webhookEvents.type,
  occurredAt: webhookEvents.occurredAt,
  contractId: webhookEvents.contractId,
  organizationId: webhookEvents.organizationId,
  contract: webhookEvents.contract,
  extra: webhookEvents.extra,
};

export interface EventPageRequest {
  /** Events after this position (0: from the oldest retained). */
  after: number;
  limit: number;
  /** Only these types (none: every type). */
  types?: readonly string[];
}

/**
 * A page of the caller's events after a position: per access path (and the events about
 * everyone), its events after it in position order (webhook_events_personal_position_idx,
 * _organization_position_idx, _everyone_position_idx), cut
 * to the page and merged, so a page reads about `limit` entries a path whatever the table
 * holds of other tenants.
 */
export function eventPageStatement(scope: CallerScope, shape: AccessShape | undefined, request: EventPageRequest): Statement<ListedEvent[]> {
  const types = request.types && request.types.length > 0 ? [...request.types] : undefined;
  const ofKey = scope.tokenId !== undefined;
  const build = (db: Database) => {
    const after = sql`${webhookEvents.position} > ${sql.placeholder('after')}`;
    const ofType = types ? inArray(webhookEvents.type, types.map((_, i) => sql.placeholder(`type${i}`))) : undefined;
    const branches = eventListPaths(shape, webhookEvents, ofKey).map((path) =>
      db
        .select(eventColumns)
        .from(webhookEvents)
        .where(and(path, after, ofType))
        .orderBy(asc(webhookEvents.position))
        .limit(sql.placeholder('limit') as unknown as number),
    );
    const [first, ...rest] = branches as [(typeof branches)[number], ...typeof branches];
    const union = rest.reduce<ReturnType<typeof first.unionAll>>((q, b) => q.unionAll(b), first as never);
    return union.orderBy(sql`${sql.identifier('position')}`).limit(sql.placeholder('limit') as unknown as number);
  };
  const values: Record<string, unknown> = { ...eventPathValues(scope, shape), after: request.after, limit: request.limit };
  types?.forEach((type, i) => (values[`type${i}`] = type));
  return {
    name: ['events.page', eventShapeName(shape, ofKey), types ? `${types.length}types` : 'all-types'].join(' '),
    build: build as unknown as Statement<ListedEvent[]>['build'],
    values,
    prepareOnServer: false,
  };
}

/** The values of eventListPaths(): the access paths' (if any) and the key's id. */
function eventPathValues(scope: CallerScope, shape: AccessShape | undefined): Record<string, unknown> {
  return { ...(shape ? accessPathValues(scope, shape) : {}), ...(scope.tokenId !== undefined ? { tokenId: scope.tokenId } : {}) };
}

const eventShapeName = (shape: AccessShape | undefined, ofKey: boolean) => `${shape ? accessShapeName(shape) : 'nothing'}${ofKey ? '+key' : ''}`;

export async function selectEventPage(db: Database, scope: CallerScope, shape: AccessShape | undefined, request: EventPageRequest): Promise<ListedEvent[]> {
  const rows = await runStatement(db, eventPageStatement(scope, shape, request));
  return rows.map((row) => ({ ...row, position: Number(row.position), occurredAt: new Date(row.occurredAt) }));
}

/** The highest position given so far (0: none): where a reader starting now would resume. */
export async function currentEventPosition(db: Database): Promise<number> {
  // endpoint_id IS NULL: the list's own index (webhook_events_position_idx), one entry read.
  const [row] = await db.select({ last: sql<string | null>`max(${webhookEvents.position})` }).from(webhookEvents).where(sql`${webhookEvents.endpointId} IS NULL`);
  return Number(row?.last ?? 0);
}


/** One of the caller's events by id (undefined: no such event in the list, or not the caller's). */
export async function selectEventById(db: Database, scope: CallerScope, id: string): Promise<ListedEvent | undefined> {
  const shape = accessShape(scope, undefined);
  const ofKey = scope.tokenId !== undefined;
  const statement: Statement<ListedEvent[]> = {
    name: ['events.by-id', eventShapeName(shape, ofKey)].join(' '),
    build: ((db: Database) =>
      db
        .select(eventColumns)
        .from(webhookEvents)
        .where(and(sql`${webhookEvents.id} = ${sql.placeholder('id')}`, sql`${webhookEvents.position} IS NOT NULL`, sql`(${sql.join(eventListPaths(shape, webhookEvents, ofKey), sql` OR `)})`))
        .limit(1)) as unknown as Statement<ListedEvent[]>['build'],
    values: { ...eventPathValues(scope, shape), id },
    prepareOnServer: false,
  };
  const [row] = await runStatement(db, statement);
  return row && { ...row, position: Number(row.position), occurredAt: new Date(row.occurredAt) };
}

/**
 * Writes the events that tell API keys their access changed (one access.reduced and/or one
 * access.expanded a key, in that order), in the writer's transaction: they take their
 * positions at its commit, after everything that committed before.
 */
export async function insertKeyAccessEvents(db: Database, changes: readonly KeyReachChange[]): Promise<void> {
  const rows = changes.flatMap((change) =>
    (['reduced', 'expanded'] as const)
      .filter((way) => change[way].personal || change[way].organizationIds.length > 0)
      .map((way) => ({ type: `access.${way}`, tokenId: change.tokenId, extra: { organization_ids: change[way].organizationIds, personal: change[way].personal } })),
  );
  if (rows.length > 0) await db.insert(webhookEvents).values(rows);
}

/** How far retention has removed the list (event_list_horizon). */
export async function readEventHorizon(db: Database): Promise<{ prunedThrough: number; prunedUntil: Date | null }> {
  const [row] = await db.select({ prunedThrough: eventListHorizon.prunedThrough, prunedUntil: eventListHorizon.prunedUntil }).from(eventListHorizon);
  return { prunedThrough: Number(row?.prunedThrough ?? 0), prunedUntil: row?.prunedUntil ?? null };
}

/**
 * Where a reader starting at an instant resumes: before the first event (by when its
 * transaction started) at or after it, else at the current end. An instant names no exact
 * place in commit order; the cursor does.
 */
export async function positionBefore(db: Database, since: Date): Promise<number> {
  const [row] = await db
    .select({ position: webhookEvents.position })
    .from(webhookEvents)
    .where(and(sql`${webhookEvents.occurredAt} >= ${since.toISOString()}::timestamptz`, sql`${webhookEvents.position} IS NOT NULL`))
    .orderBy(asc(webhookEvents.occurredAt), asc(webhookEvents.position))
    .limit(1);
  return row?.position !== undefined && row.position !== null ? Number(row.position) - 1 : currentEventPosition(db);
}

/**
 * Removes up to `batch` of the oldest events of the list (in position order) that
 * occurred before `before`, stopping at the first younger one, and moves the horizon past
 * them. An event a pending delivery still needs stays until it is delivered, but below the
 * horizon: the list no longer serves it. Returns how many were removed (fewer than
 * `batch`: nothing older is left).
 */
export async function pruneEventList(db: Database, before: Date, batch: number): Promise<number> {
  const [row] = await executeRows<{ removed: number }>(
    db,
    sql`
    WITH head AS (
      SELECT seq, position, occurred_at FROM webhook_events WHERE endpoint_id IS NULL AND position IS NOT NULL ORDER BY position LIMIT ${batch}
    ), stop AS (
      SELECT min(position) AS position FROM head WHERE occurred_at >= ${before.toISOString()}::timestamptz
    ), doomed AS (
      SELECT seq, position, occurred_at FROM head WHERE (SELECT position FROM stop) IS NULL OR position < (SELECT position FROM stop)
    ), removed AS (
      DELETE FROM webhook_events e USING doomed d
      WHERE e.seq = d.seq AND NOT EXISTS (SELECT 1 FROM webhook_deliveries w WHERE w.event_seq = e.seq AND w.state = 'pending')
      RETURNING e.seq
    ), moved AS (
      -- An upsert: the row is the migration's, but a table emptied by hand (a test's reset)
      -- must not leave the horizon unmoved while its events are gone.
      INSERT INTO event_list_horizon (singleton, pruned_through, pruned_until)
      SELECT true, max(position), max(occurred_at) FROM doomed HAVING count(*) > 0
      ON CONFLICT (singleton) DO UPDATE SET
        pruned_through = greatest(event_list_horizon.pruned_through, excluded.pruned_through),
        pruned_until = greatest(event_list_horizon.pruned_until, excluded.pruned_until)
      RETURNING 1
    )
    SELECT (SELECT count(*) FROM doomed)::int AS removed, (SELECT count(*) FROM moved) AS moved, (SELECT count(*) FROM removed) AS deleted`,
  );
  return row?.removed ?? 0;
}
