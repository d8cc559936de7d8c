import { and, desc, eq, gte, inArray, lt, lte, or, sql, type SQL } from 'drizzle-orm';
import type { Database } from '../client';
import { securityEvents } from '../schema';
import { MEMBERSHIPS_WITH_ORGANIZATION, memberObjectReaches, type MemberObject } from './access';

/**
 * The security log (server/security-log/): appended in the transaction of the change it
 * records, read by the person it concerns (and an organisation's owners and admins), never
 * changed; only the retention job deletes, under the setting the table's trigger asks for
 * (migration 0013).
 */

export type SecurityEventInsert = typeof securityEvents.$inferInsert;
export type SecurityEventRecord = typeof securityEvents.$inferSelect;

export async function insertSecurityEvents(db: Database, rows: SecurityEventInsert[]): Promise<void> {
  if (rows.length === 0) return;
  await db.insert(securityEvents).values(rows.map((row) => ({ ...row, reachesOrganizationIds: reachAtWrite(row.objectType, row.objectId) })));
}

const TOKEN: MemberObject = { userId: sql`t.user_id`, accessAll: sql`t.access_all`, accessOrganizationIds: sql`t.access_organization_ids`, tokenId: sql`t.id` };
const ENDPOINT: MemberObject = { userId: sql`e.user_id`, accessAll: sql`e.access_all`, accessOrganizationIds: sql`e.access_organization_ids` };

/**
 * The organisations a member's personal key, calendar feed or webhook endpoint reaches as
 * the event about it is written (db/queries/access.ts): the value of
 * `reaches_organization_ids`, which puts the event in those organisations' logs for good.
 * Null for any other object (an organisation's own key is in its log by organization_id).
 */
export function reachAtWrite(objectType: string, objectId: string | null | undefined): SQL | null {
  if (!objectId) return null;
  if (objectType === 'api_key' || objectType === 'calendar_feed') return tokenReach(sql`${objectId}::uuid`);
  if (objectType === 'webhook_endpoint') {
    return sql`(SELECT array_agg(m.organization_id) FROM webhook_endpoints e, ${MEMBERSHIPS_WITH_ORGANIZATION}
      WHERE e.id = ${objectId}::uuid AND ${memberObjectReaches(ENDPOINT)})`;
  }
  return null;
}

/** `reachAtWrite()` of the access token whose id is `tokenId` (SQL). */
function tokenReach(tokenId: SQL): SQL {
  return sql`(SELECT array_agg(m.organization_id) FROM access_tokens t, ${MEMBERSHIPS_WITH_ORGANIZATION}
      WHERE t.id = ${tokenId} AND t.organization_id IS NULL AND ${memberObjectReaches(TOKEN)})`;
}

/** Whose events a log shows: a person's own, or an organisation's. */
export type SecurityLogOwner = { userId: string } | { organizationId: string };

export interface SecurityLogFilter {
  kinds?: string[];
  from?: Date;
  to?: Date;
  before?: { at: Date; id: number };
}

/** A page of a log, newest first, after the cursor. */
export async function selectSecurityEvents(db: Database, owner: SecurityLogOwner, filter: SecurityLogFilter, limit: number): Promise<SecurityEventRecord[]> {
  if ('userId' in owner) return selectEventsWhere(db, eq(securityEvents.subjectUserId, owner.userId), filter, limit);
  // An organisation's log: its own events (its keys, its policy, access it removed), and
  // those of its members' keys, calendar feeds and webhook endpoints that reached it when
  // they were written: two statements, on the organisation's index and on the GIN index of
  // `reaches_organization_ids`, each at most a page, merged (one OR could use neither).
  const [own, members] = await Promise.all([
    selectEventsWhere(db, eq(securityEvents.organizationId, owner.organizationId), filter, limit),
    selectEventsWhere(
      db,
      sql`${securityEvents.organizationId} IS NULL AND ${securityEvents.reachesOrganizationIds} @> ARRAY[${owner.organizationId}::uuid]`,
      filter,
      limit,
    ),
  ]);
  return [...own, ...members].sort((a, b) => b.at.getTime() - a.at.getTime() || b.id - a.id).slice(0, limit);
}

function selectEventsWhere(db: Database, whose: SQL | undefined, filter: SecurityLogFilter, limit: number): Promise<SecurityEventRecord[]> {
  const conditions: (SQL | undefined)[] = [whose];
  if (filter.kinds && filter.kinds.length > 0) conditions.push(inArray(securityEvents.kind, filter.kinds));
  if (filter.from) conditions.push(gte(securityEvents.at, filter.from));
  if (filter.to) conditions.push(lte(securityEvents.at, filter.to));
  if (filter.before) {
    conditions.push(or(lt(securityEvents.at, filter.before.at), and(eq(securityEvents.at, filter.before.at), lt(securityEvents.id, filter.before.id))));
  }
  return db
    .select()
    .from(securityEvents)
    .where(and(...conditions))
    .orderBy(desc(securityEvents.at), desc(securityEvents.id))
    .limit(limit);
}

/**
 * Inserts refusal events (a key used from a disallowed address) unless the same key and
 * address already has one within the hour: once per key and address per hour across
 * every instance, decided in the statement.
 */
export async function insertRefusalsOncePerHour(db: Database, rows: SecurityEventInsert[]): Promise<void> {
  for (const row of rows) {
    await db.execute(sql`
      INSERT INTO security_events (at, kind, actor_kind, actor_user_id, actor_label, client_address, user_agent, subject_user_id, organization_id, reaches_organization_ids, object_type, object_id, object_label, details)
      SELECT ${(row.at ?? new Date()).toISOString()}::timestamptz, ${row.kind}, ${row.actorKind}, ${row.actorUserId ?? null}::uuid, CASE WHEN k.name IS NULL THEN ${row.actorLabel}::text ELSE 'API key ' || k.name END, ${row.clientAddress ?? null}, ${row.userAgent ?? null},
             coalesce(${row.subjectUserId ?? null}::uuid, k.user_id, k.created_by), ${row.organizationId ?? null}::uuid, ${reachAtWrite(row.objectType, row.objectId) ?? sql`NULL`}::uuid[], ${row.objectType}, ${row.objectId ?? null},
             coalesce(${row.objectLabel ?? null}::text, k.name), ${row.details ? JSON.stringify(row.details) : null}::jsonb
      FROM (SELECT 1) one LEFT JOIN access_tokens k ON k.id = ${row.objectId ?? null}::uuid
      WHERE NOT EXISTS (
        SELECT 1 FROM security_events
        WHERE object_id = ${row.objectId ?? null} AND kind = ${row.kind} AND client_address IS NOT DISTINCT FROM ${row.clientAddress ?? null}::text
          AND at > ${new Date((row.at ?? new Date()).getTime() - 3_600_000).toISOString()}::timestamptz
      )`);
  }
}

/**
 * One "expired" event per API key whose expiry passed (at most `limit` a run), written by
 * the retention job as "system": a key expires by the clock, with no request to record it.
 * Only keys expired since `since` (the log's retention), or a pruned event would come back.
 */
export async function insertExpiredKeyEvents(db: Database, now: Date, since: Date, limit: number): Promise<number> {
  const rows = await db.execute(sql`
    INSERT INTO security_events (at, kind, actor_kind, actor_label, subject_user_id, organization_id, reaches_organization_ids, object_type, object_id, object_label)
    SELECT x.expires_at, 'api_key.expired', 'system', 'system', coalesce(x.user_id, x.created_by), x.organization_id, ${tokenReach(sql`x.id`)}, 'api_key', x.id::text, x.name
    FROM access_tokens x
    WHERE x.kind = 'api_key' AND x.expires_at <= ${now.toISOString()}::timestamptz AND x.expires_at > ${since.toISOString()}::timestamptz AND x.revoked_at IS NULL
      AND NOT EXISTS (SELECT 1 FROM security_events e WHERE e.object_id = x.id::text AND e.kind = 'api_key.expired')
    ORDER BY x.expires_at
    LIMIT ${limit}
    RETURNING id`);
  return Array.isArray(rows) ? rows.length : ((rows as { rows?: unknown[] }).rows?.length ?? 0);
}

/**
 * Deletes events older than `before`: the one deletion the table allows, inside a
 * transaction that tells its trigger this is the retention job.
 */
export async function pruneSecurityEvents(db: Database, before: Date): Promise<number> {
  return db.transaction(async (tx) => {
    await tx.execute(sql`SELECT set_config('app.security_log_retention', 'on', true)`);
    const rows = await tx.delete(securityEvents).where(lt(securityEvents.at, before)).returning({ id: securityEvents.id });
    return rows.length;
  });
}
