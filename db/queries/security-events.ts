import { and, desc, eq, gte, inArray, lt, lte, or, sql, type SQL } from 'drizzle-orm';
import type { Database } from '../client';
import { securityEvents } from '../schema';
import { memberObjectReachesOrganization, type MemberObject } from './access';

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
  await db.insert(securityEvents).values(rows);
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
  // those of its members' keys, calendar feeds and webhook endpoints that read its
  // contracts. Two index scans, each at most a page, merged (one OR would read every
  // event of the organisation before sorting them).
  const [own, members] = await Promise.all([
    selectEventsWhere(db, eq(securityEvents.organizationId, owner.organizationId), filter, limit),
    selectEventsWhere(
      db,
      and(sql`${securityEvents.organizationId} IS DISTINCT FROM ${owner.organizationId}::uuid`, membersObjectsReading(owner.organizationId)),
      filter,
      limit,
    ),
  ]);
  return [...own, ...members].sort((a, b) => b.at.getTime() - a.at.getTime() || b.id - a.id).slice(0, limit);
}

/**
 * The members' keys, feeds and endpoints that read an organisation's contracts (the rule of
 * db/queries/access.ts: its policy on, their access including it, not removed by it), as its
 * keys page lists them, revoked or expired ones included: they read it until then.
 */
function membersObjectsReading(organizationId: string): SQL {
  const org = sql`${organizationId}::uuid`;
  const members = sql`SELECT user_id FROM memberships WHERE organization_id = ${org}`;
  const token: MemberObject = { userId: sql`t.user_id`, accessAll: sql`t.access_all`, accessOrganizationIds: sql`t.access_organization_ids`, tokenId: sql`t.id` };
  const endpoint: MemberObject = { userId: sql`e.user_id`, accessAll: sql`e.access_all`, accessOrganizationIds: sql`e.access_organization_ids` };
  return sql`(
    (${securityEvents.objectType} IN ('api_key', 'calendar_feed') AND ${securityEvents.objectId} IN (
      SELECT t.id::text FROM access_tokens t
      WHERE t.organization_id IS NULL AND t.user_id IN (${members}) AND ${memberObjectReachesOrganization(token, org)}))
    OR (${securityEvents.objectType} = 'webhook_endpoint' AND ${securityEvents.objectId} IN (
      SELECT e.id::text FROM webhook_endpoints e
      WHERE e.user_id IN (${members}) AND ${memberObjectReachesOrganization(endpoint, org)})))`;
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
      INSERT INTO security_events (at, kind, actor_kind, actor_user_id, actor_label, client_address, user_agent, subject_user_id, organization_id, object_type, object_id, object_label, details)
      SELECT ${(row.at ?? new Date()).toISOString()}::timestamptz, ${row.kind}, ${row.actorKind}, ${row.actorUserId ?? null}::uuid, CASE WHEN k.name IS NULL THEN ${row.actorLabel}::text ELSE 'API key ' || k.name END, ${row.clientAddress ?? null}, ${row.userAgent ?? null},
             coalesce(${row.subjectUserId ?? null}::uuid, k.user_id, k.created_by), ${row.organizationId ?? null}::uuid, ${row.objectType}, ${row.objectId ?? null},
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
    INSERT INTO security_events (at, kind, actor_kind, actor_label, subject_user_id, object_type, object_id, object_label)
    SELECT t.expires_at, 'api_key.expired', 'system', 'system', t.user_id, 'api_key', t.id::text, t.name
    FROM access_tokens t
    WHERE t.kind = 'api_key' AND t.expires_at <= ${now.toISOString()}::timestamptz AND t.expires_at > ${since.toISOString()}::timestamptz AND t.revoked_at IS NULL
      AND NOT EXISTS (SELECT 1 FROM security_events e WHERE e.object_id = t.id::text AND e.kind = 'api_key.expired')
    ORDER BY t.expires_at
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
