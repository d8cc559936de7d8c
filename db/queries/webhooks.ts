import { and, asc, count, desc, eq, gte, inArray, sql, type SQL } from 'drizzle-orm';
import type { WebhookDeliveryState, WebhookEndpointStatus } from '@/lib/webhooks';
import { executeRows, runStatement, type Database, type Statement } from '../client';
import { contracts, webhookAttempts, webhookDeliveries, webhookEndpoints, webhookEvents } from '../schema';
import { accessibleTo, accessValues, endpointMaySee, type CallerScope } from './access';
import { detailColumns, type ContractDetailRow } from './contracts/columns';
import { exactKey, onRollingDate, visibleExpirationDate } from './contracts/expressions';

/** The dates the *_upcoming events count down to: the expiration, the next renewal, the notice deadline. */
export type UpcomingKind = 'renewal' | 'expiration' | 'notice_deadline';

/**
 * Data access of webhooks: endpoints, the outbox's fan-out, claiming and recording
 * deliveries, the delivery log, the upcoming-date events. The decisions (schedule, when to
 * disable, what to send) are server/webhooks/'s; these functions take them as arguments.
 */

// Endpoints ------------------------------------------------------------------------------

/** What the settings page and the command line list: never a secret. */
export const endpointListColumns = {
  id: webhookEndpoints.id,
  url: webhookEndpoints.url,
  eventTypes: webhookEndpoints.eventTypes,
  renewalOffsets: webhookEndpoints.renewalOffsets,
  status: webhookEndpoints.status,
  secretHint: webhookEndpoints.secretHint,
  previousSecretExpiresAt: webhookEndpoints.previousSecretExpiresAt,
  failingSince: webhookEndpoints.failingSince,
  disabledReason: webhookEndpoints.disabledReason,
  createdAt: webhookEndpoints.createdAt,
  accessAll: webhookEndpoints.accessAll,
  accessPersonal: webhookEndpoints.accessPersonal,
  accessOrganizationIds: webhookEndpoints.accessOrganizationIds,
};

export interface EndpointRow {
  id: string;
  url: string;
  eventTypes: string[];
  renewalOffsets: number[];
  status: WebhookEndpointStatus;
  secretHint: string;
  previousSecretExpiresAt: Date | null;
  failingSince: Date | null;
  disabledReason: string | null;
  createdAt: Date;
  /** Which contracts it hears of (docs/keys.md): everything its owner can see, or the chosen set. */
  accessAll: boolean;
  accessPersonal: boolean;
  accessOrganizationIds: string[];
}

const ofUser = (userId: string, id: string) => and(eq(webhookEndpoints.id, id), eq(webhookEndpoints.userId, userId));

export function selectEndpointsOf(db: Database, userId: string): Promise<EndpointRow[]> {
  return db
    .select(endpointListColumns)
    .from(webhookEndpoints)
    .where(eq(webhookEndpoints.userId, userId))
    .orderBy(desc(webhookEndpoints.createdAt), desc(webhookEndpoints.id));
}

/** One of a user's endpoints; another user's is not found. */
export async function selectEndpointOf(db: Database, userId: string, id: string): Promise<EndpointRow | undefined> {
  const [row] = await db.select(endpointListColumns).from(webhookEndpoints).where(ofUser(userId, id));
  return row;
}

/** Who owns an endpoint (the command line acts by id alone). */
export async function selectEndpointOwner(db: Database, id: string): Promise<string | undefined> {
  const [row] = await db.select({ userId: webhookEndpoints.userId }).from(webhookEndpoints).where(eq(webhookEndpoints.id, id));
  return row?.userId;
}

export async function countEndpoints(db: Database, userId: string): Promise<number> {
  const [row] = await db.select({ n: count() }).from(webhookEndpoints).where(eq(webhookEndpoints.userId, userId));
  return Number(row?.n ?? 0);
}

export async function insertEndpoint(
  db: Database,
  values: {
    id: string;
    userId: string;
    url: string;
    eventTypes: string[];
    renewalOffsets: number[];
    secretCiphertext: string;
    secretHint: string;
    createdAt: Date;
    accessAll?: boolean;
    accessPersonal?: boolean;
    accessOrganizationIds?: string[];
  },
): Promise<EndpointRow> {
  const [row] = await db
    .insert(webhookEndpoints)
    .values({ ...values, updatedAt: values.createdAt })
    .returning(endpointListColumns);
  return row!;
}

/** Changes one of a user's endpoints; undefined when it is not theirs. */
export async function updateEndpoint(
  db: Database,
  userId: string,
  id: string,
  values: Partial<{
    status: WebhookEndpointStatus;
    failingSince: Date | null;
    disabledReason: string | null;
    secretCiphertext: string;
    secretHint: string;
    previousSecretCiphertext: string | null;
    previousSecretExpiresAt: Date | null;
    accessAll: boolean;
    accessPersonal: boolean;
    accessOrganizationIds: string[];
  }>,
  now: Date,
): Promise<EndpointRow | undefined> {
  const [row] = await db
    .update(webhookEndpoints)
    .set({ ...values, updatedAt: now })
    .where(ofUser(userId, id))
    .returning(endpointListColumns);
  return row;
}

/** The sealed secrets of one of a user's endpoints (rotation moves the current one aside). */
export async function selectEndpointSecrets(db: Database, userId: string, id: string) {
  const [row] = await db
    .select({ secretCiphertext: webhookEndpoints.secretCiphertext })
    .from(webhookEndpoints)
    .where(ofUser(userId, id))
    .for('update');
  return row;
}

export async function deleteEndpoint(db: Database, userId: string, id: string): Promise<boolean> {
  const rows = await db.delete(webhookEndpoints).where(ofUser(userId, id)).returning({ id: webhookEndpoints.id });
  return rows.length > 0;
}

// The outbox's fan-out --------------------------------------------------------------------

// One fan-out at a time across every worker (a transaction-scoped advisory lock): two
// fan-outs of interleaved batches could commit a contract's later event before its
// earlier one, and a delivery worker would then send them out of order.
const FAN_OUT_LOCK = 0x77686f6f6b; // "whook"

/**
 * Turns the oldest events the trigger wrote into one delivery per endpoint that subscribed
 * to the type and whose owner may see the contract (access.ts `endpointMaySee`; checked again
 * with accessibleTo() at delivery). Every event is kept for the event list (pruned after
 * its retention). Returns how many
 * events were handled, or -1 when another worker holds the fan-out.
 */
export async function fanOutEvents(db: Database, now: Date, limit: number): Promise<number> {
  return db.transaction(async (tx) => {
    const [lock] = await executeRows<{ locked: boolean }>(tx as unknown as Database, sql`SELECT pg_try_advisory_xact_lock(${FAN_OUT_LOCK}) AS locked`);
    if (!lock?.locked) return -1;
    const handled = await executeRows<{ seq: string }>(
      tx as unknown as Database,
      sql`
      WITH batch AS (
        SELECT seq, type, contract_id, owner_id, organization_id, occurred_at FROM webhook_events
        WHERE fanned_out_at IS NULL AND endpoint_id IS NULL
        ORDER BY seq LIMIT ${limit}
      ), delivered AS (
        INSERT INTO webhook_deliveries (endpoint_id, event_seq, contract_id, next_attempt_at)
        SELECT e.id, b.seq, b.contract_id, ${now.toISOString()}::timestamptz
        FROM batch b JOIN webhook_endpoints e
          ON e.status <> 'disabled'
         AND e.event_types @> jsonb_build_array(b.type)
         -- An endpoint hears of what happened once it existed (every change is an event of
         -- the list, so the outbox holds changes from before any endpoint).
         AND e.created_at <= b.occurred_at
         AND ${endpointMaySee(sql`b.owner_id`, sql`b.organization_id`)}
        ORDER BY b.seq, e.id
        RETURNING event_seq
      )
      -- Every event stays, whether an endpoint wanted it or not: the event list reads it
      -- until EVENTS_RETENTION_DAYS. (A data-modifying WITH runs whether or not it is read.)
      UPDATE webhook_events SET fanned_out_at = ${now.toISOString()}::timestamptz
      WHERE seq IN (SELECT seq FROM batch)
      RETURNING seq::text`,
    );
    return handled.length;
  });
}

// Claiming and recording deliveries -------------------------------------------------------

/**
 * Claims up to `limit` deliveries that are due, for `leaseMs`: pending, their time come,
 * not leased (or the lease expired: the worker that held it died), their endpoint active,
 * and no earlier pending delivery of the same contract to the same endpoint (in order per
 * contract). FOR UPDATE SKIP LOCKED: concurrent workers claim disjoint sets, and a row one
 * of them just claimed no longer qualifies when the other re-reads it. Returns the ids.
 */
export async function claimDeliveries(
  db: Database,
  claim: { now: Date; leaseMs: number; limit: number; leaseToken: string; deliveryId?: string },
): Promise<string[]> {
  const now = claim.now.toISOString();
  const rows = await executeRows<{ id: string }>(
    db,
    sql`
    WITH due AS (
      SELECT d.id FROM webhook_deliveries d
      JOIN webhook_endpoints e ON e.id = d.endpoint_id
      WHERE d.state = 'pending'
        AND d.next_attempt_at <= ${now}::timestamptz
        AND (d.lease_expires_at IS NULL OR d.lease_expires_at <= ${now}::timestamptz)
        AND e.status = 'active'
        ${claim.deliveryId ? sql`AND d.id = ${claim.deliveryId}::uuid` : sql``}
        AND NOT EXISTS (
          SELECT 1 FROM webhook_deliveries p
          WHERE p.endpoint_id = d.endpoint_id AND p.contract_id = d.contract_id
            AND p.state = 'pending' AND p.event_seq < d.event_seq
        )
      ORDER BY d.next_attempt_at, d.event_seq
      LIMIT ${claim.limit}
      FOR UPDATE OF d SKIP LOCKED
    )
    UPDATE webhook_deliveries SET lease_token = ${claim.leaseToken}::uuid,
      lease_expires_at = ${new Date(claim.now.getTime() + claim.leaseMs).toISOString()}::timestamptz
    WHERE id IN (SELECT id FROM due)
    RETURNING id`,
  );
  return rows.map((r) => r.id);
}

/** A claimed delivery with its event and endpoint: everything an attempt needs. */
export interface ClaimedDelivery {
  id: string;
  attempts: number;
  endpointId: string;
  userId: string;
  url: string;
  secretCiphertext: string;
  previousSecretCiphertext: string | null;
  previousSecretExpiresAt: Date | null;
  eventId: string;
  eventType: string;
  contractId: string | null;
  ownerId: string | null;
  organizationId: string | null;
  contract: Record<string, unknown> | null;
  extra: Record<string, unknown> | null;
  occurredAt: Date;
}

export function selectClaimed(db: Database, ids: string[]): Promise<ClaimedDelivery[]> {
  if (ids.length === 0) return Promise.resolve([]);
  return db
    .select({
      id: webhookDeliveries.id,
      attempts: webhookDeliveries.attempts,
      endpointId: webhookEndpoints.id,
      userId: webhookEndpoints.userId,
      url: webhookEndpoints.url,
      secretCiphertext: webhookEndpoints.secretCiphertext,
      previousSecretCiphertext: webhookEndpoints.previousSecretCiphertext,
      previousSecretExpiresAt: webhookEndpoints.previousSecretExpiresAt,
      eventId: webhookEvents.id,
      eventType: webhookEvents.type,
      contractId: webhookEvents.contractId,
      ownerId: webhookEvents.ownerId,
      organizationId: webhookEvents.organizationId,
      contract: webhookEvents.contract,
      extra: webhookEvents.extra,
      occurredAt: webhookEvents.occurredAt,
    })
    .from(webhookDeliveries)
    .innerJoin(webhookEndpoints, eq(webhookEndpoints.id, webhookDeliveries.endpointId))
    .innerJoin(webhookEvents, eq(webhookEvents.seq, webhookDeliveries.eventSeq))
    .where(inArray(webhookDeliveries.id, ids))
    .orderBy(asc(webhookDeliveries.nextAttemptAt), asc(webhookDeliveries.eventSeq)) as Promise<ClaimedDelivery[]>;
}

/**
 * Whether the scope may see a contract of this owner and organisation: accessibleTo(), the
 * one access predicate, over the event's owner scope instead of a row (so that it answers
 * for a deleted contract too), evaluated with the owner's memberships of now.
 */
export function scopeMaySeeStatement(scope: CallerScope, ownerId: string | null, organizationId: string | null): Statement<{ visible: number }[]> {
  return {
    name: 'webhooks.scope-may-see',
    build: (db) =>
      db
        .select({ visible: sql<number>`1` })
        .from(
          sql`(VALUES (${sql.placeholder('ownerId')}::uuid, ${sql.placeholder('organizationId')}::uuid)) AS ${contracts}(${sql.identifier('owner_id')}, ${sql.identifier('organization_id')})`,
        )
        .where(accessibleTo()),
    values: { ...accessValues(scope), ownerId, organizationId },
  };
}

export async function scopeMaySee(db: Database, scope: CallerScope, ownerId: string | null, organizationId: string | null): Promise<boolean> {
  return (await runStatement(db, scopeMaySeeStatement(scope, ownerId, organizationId))).length > 0;
}

export interface AttemptRecord {
  deliveryId: string;
  leaseToken: string;
  endpointId: string;
  userId: string;
  attemptedAt: Date;
  succeeded: boolean;
  statusCode: number | null;
  durationMs: number;
  response: string | null;
  error: string | null;
  /** The delivery's state afterwards, and its next attempt while pending. */
  state: WebhookDeliveryState;
  nextAttemptAt: Date | null;
}

/**
 * Records an attempt made under a lease: the delivery's new state, the attempt in the
 * history, the endpoint's run of failures. Nothing is written when the lease was lost
 * (another worker reclaimed an expired one). Returns the start of the endpoint's run of
 * failures (null after a success), or undefined when the lease was lost.
 */
export async function recordAttempt(db: Database, attempt: AttemptRecord): Promise<{ failingSince: Date | null } | undefined> {
  return db.transaction(async (tx) => {
    const updated = await tx
      .update(webhookDeliveries)
      .set({
        state: attempt.state,
        attempts: sql`${webhookDeliveries.attempts} + 1`,
        ...(attempt.nextAttemptAt ? { nextAttemptAt: attempt.nextAttemptAt } : {}),
        leaseToken: null,
        leaseExpiresAt: null,
        lastAttemptAt: attempt.attemptedAt,
        lastStatusCode: attempt.statusCode,
        lastDurationMs: attempt.durationMs,
        lastResponse: attempt.response,
        lastError: attempt.error,
      })
      .where(and(eq(webhookDeliveries.id, attempt.deliveryId), eq(webhookDeliveries.leaseToken, attempt.leaseToken)))
      .returning({ id: webhookDeliveries.id });
    if (updated.length === 0) return undefined;
    await tx.insert(webhookAttempts).values({
      deliveryId: attempt.deliveryId,
      endpointId: attempt.endpointId,
      userId: attempt.userId,
      attemptedAt: attempt.attemptedAt,
      succeeded: attempt.succeeded,
      statusCode: attempt.statusCode,
      durationMs: attempt.durationMs,
      error: attempt.error,
    });
    const [endpoint] = await tx
      .update(webhookEndpoints)
      .set({ failingSince: attempt.succeeded ? null : sql`coalesce(${webhookEndpoints.failingSince}, ${attempt.attemptedAt.toISOString()}::timestamptz)` })
      .where(eq(webhookEndpoints.id, attempt.endpointId))
      .returning({ failingSince: webhookEndpoints.failingSince });
    return { failingSince: endpoint?.failingSince ?? null };
  });
}

/** A delivery that will not be attempted (its owner can no longer see the contract). */
export async function skipDelivery(db: Database, deliveryId: string, leaseToken: string, reason: string): Promise<void> {
  await db
    .update(webhookDeliveries)
    .set({ state: 'skipped', leaseToken: null, leaseExpiresAt: null, lastError: reason })
    .where(and(eq(webhookDeliveries.id, deliveryId), eq(webhookDeliveries.leaseToken, leaseToken)));
}

/** Gives claimed deliveries back at once (a worker stopping before it attempted them). */
export async function releaseLeases(db: Database, leaseToken: string): Promise<void> {
  await db
    .update(webhookDeliveries)
    .set({ leaseToken: null, leaseExpiresAt: null })
    .where(and(eq(webhookDeliveries.leaseToken, leaseToken), eq(webhookDeliveries.state, 'pending')));
}

/**
 * Disables an endpoint (five days of failures): nothing more is queued for it, and what is
 * pending fails, so that enabling it again does not replay days of events at once.
 */
export async function disableEndpoint(
  db: Database,
  endpointId: string,
  reason: string,
  now: Date,
  /** Written in the same transaction (the security log's event). */
  alongside?: (tx: Database) => Promise<void>,
): Promise<void> {
  await db.transaction(async (tx) => {
    await alongside?.(tx as unknown as Database);
    await tx.update(webhookEndpoints).set({ status: 'disabled', disabledReason: reason, updatedAt: now }).where(eq(webhookEndpoints.id, endpointId));
    await tx
      .update(webhookDeliveries)
      .set({ state: 'failed', leaseToken: null, leaseExpiresAt: null, lastError: 'Not sent: the endpoint was disabled.' })
      .where(and(eq(webhookDeliveries.endpointId, endpointId), eq(webhookDeliveries.state, 'pending')));
  });
}

/** When the next pending delivery is due (the worker sleeps until then, or until notified). */
export async function nextDueAt(db: Database): Promise<Date | undefined> {
  const [row] = await db
    .select({ at: sql<string | null>`min(${webhookDeliveries.nextAttemptAt})::text` })
    .from(webhookDeliveries)
    .innerJoin(webhookEndpoints, eq(webhookEndpoints.id, webhookDeliveries.endpointId))
    .where(and(eq(webhookDeliveries.state, 'pending'), eq(webhookEndpoints.status, 'active')));
  return row?.at ? new Date(row.at) : undefined;
}

// Events the app writes for one endpoint -----------------------------------------------------

/** A test event for one endpoint and its delivery, due now. Returns the delivery's id. */
export async function insertTestDelivery(db: Database, endpointId: string, extra: Record<string, unknown>, now: Date): Promise<string> {
  const at = now.toISOString();
  const [row] = await executeRows<{ id: string }>(
    db,
    sql`
    WITH event AS (
      INSERT INTO webhook_events (type, extra, endpoint_id, occurred_at, fanned_out_at)
      VALUES ('webhook.test', ${JSON.stringify(extra)}::jsonb, ${endpointId}::uuid, ${at}::timestamptz, ${at}::timestamptz)
      RETURNING seq
    )
    INSERT INTO webhook_deliveries (endpoint_id, event_seq, next_attempt_at)
    SELECT ${endpointId}::uuid, seq, ${at}::timestamptz FROM event
    RETURNING id`,
  );
  return row!.id;
}

/**
 * A *_upcoming event for one endpoint, contract, date and offset, with its delivery, unless
 * one was already sent for the same five (the marker's primary key decides, atomically, in
 * the same statement). Returns the delivery's id, or undefined when already sent.
 */
export async function insertUpcomingDelivery(
  db: Database,
  upcoming: { endpointId: string; contractId: string; kind: UpcomingKind; date: string; offsetDays: number; daysUntil: number; now: Date },
): Promise<string | undefined> {
  const at = upcoming.now.toISOString();
  const extra = JSON.stringify({ date: upcoming.date, offset_days: upcoming.offsetDays, days_until: upcoming.daysUntil });
  const [row] = await executeRows<{ id: string }>(
    db,
    sql`
    WITH marker AS (
      INSERT INTO webhook_upcoming_sent (endpoint_id, contract_id, kind, date, offset_days, sent_at)
      VALUES (${upcoming.endpointId}::uuid, ${upcoming.contractId}::uuid, ${upcoming.kind}, ${upcoming.date}::date, ${upcoming.offsetDays}, ${at}::timestamptz)
      ON CONFLICT DO NOTHING
      RETURNING 1
    ), event AS (
      INSERT INTO webhook_events (type, contract_id, owner_id, organization_id, contract, extra, endpoint_id, occurred_at, fanned_out_at)
      SELECT ${`contract.${upcoming.kind}_upcoming`}, c.id, c.owner_id, c.organization_id, to_jsonb(c), ${extra}::jsonb,
             ${upcoming.endpointId}::uuid, ${at}::timestamptz, ${at}::timestamptz
      FROM contracts c WHERE c.id = ${upcoming.contractId}::uuid AND EXISTS (SELECT 1 FROM marker)
      RETURNING seq, contract_id
    )
    INSERT INTO webhook_deliveries (endpoint_id, event_seq, contract_id, next_attempt_at)
    SELECT ${upcoming.endpointId}::uuid, seq, contract_id, ${at}::timestamptz FROM event
    RETURNING id`,
  );
  return row?.id;
}

/** Active endpoints subscribed to an upcoming-date event, with their owner and offsets. */
export function selectUpcomingSubscribers(db: Database) {
  return db
    .select({ id: webhookEndpoints.id, userId: webhookEndpoints.userId, eventTypes: webhookEndpoints.eventTypes, renewalOffsets: webhookEndpoints.renewalOffsets })
    .from(webhookEndpoints)
    .where(
      and(
        eq(webhookEndpoints.status, 'active'),
        sql`(${webhookEndpoints.eventTypes} @> '["contract.renewal_upcoming"]'::jsonb OR ${webhookEndpoints.eventTypes} @> '["contract.expiration_upcoming"]'::jsonb OR ${webhookEndpoints.eventTypes} @> '["contract.notice_deadline_upcoming"]'::jsonb)`,
      ),
    );
}

/**
 * The completed contracts a scope sees whose date of `kind` lies between two days, both
 * included: the dates the API shows on `from` (today). The next renewal and the notice
 * deadline are the stored ones, or by the rule for a row the scheduled job has not rolled
 * yet (contracts/expressions.ts, isStale), as in the list.
 */
export function upcomingStatement(scope: CallerScope, kind: UpcomingKind, from: string, to: string): Statement<(ContractDetailRow & { date: string })[]> {
  const inWindow = (date: SQL) => sql`${date} BETWEEN ${sql.placeholder('from')}::date AND ${sql.placeholder('to')}::date`;
  const field = kind === 'renewal' ? 'next_renewal_date' : 'notice_deadline';
  const date = kind === 'expiration' ? visibleExpirationDate : exactKey(field);
  const where = kind === 'expiration' ? inWindow(visibleExpirationDate) : onRollingDate(field, inWindow);
  return {
    name: `webhooks.upcoming.${kind}`,
    build: (db) =>
      db
        .select({ ...detailColumns, date: sql<string>`${date}::text` })
        .from(contracts)
        .where(and(accessibleTo(), where))
        .orderBy(asc(contracts.id)) as never,
    // The rolling dates' "today" (isStale) is the window's first day.
    values: { ...accessValues(scope), from, to, today: from },
  };
}

// The delivery log ---------------------------------------------------------------------------

export interface DeliveryLogRow {
  id: string;
  state: WebhookDeliveryState;
  attempts: number;
  nextAttemptAt: Date;
  lastAttemptAt: Date | null;
  lastStatusCode: number | null;
  lastDurationMs: number | null;
  lastResponse: string | null;
  lastError: string | null;
  createdAt: Date;
  eventId: string;
  eventType: string;
  contractId: string | null;
}

/** The newest deliveries of one of a user's endpoints. */
export function selectDeliveryLog(db: Database, userId: string, endpointId: string, limit: number): Promise<DeliveryLogRow[]> {
  return db
    .select({
      id: webhookDeliveries.id,
      state: webhookDeliveries.state,
      attempts: webhookDeliveries.attempts,
      nextAttemptAt: webhookDeliveries.nextAttemptAt,
      lastAttemptAt: webhookDeliveries.lastAttemptAt,
      lastStatusCode: webhookDeliveries.lastStatusCode,
      lastDurationMs: webhookDeliveries.lastDurationMs,
      lastResponse: webhookDeliveries.lastResponse,
      lastError: webhookDeliveries.lastError,
      createdAt: webhookDeliveries.createdAt,
      eventId: webhookEvents.id,
      eventType: webhookEvents.type,
      contractId: webhookEvents.contractId,
    })
    .from(webhookDeliveries)
    .innerJoin(webhookEndpoints, eq(webhookEndpoints.id, webhookDeliveries.endpointId))
    .innerJoin(webhookEvents, eq(webhookEvents.seq, webhookDeliveries.eventSeq))
    .where(and(eq(webhookDeliveries.endpointId, endpointId), eq(webhookEndpoints.userId, userId)))
    .orderBy(desc(webhookDeliveries.createdAt), desc(webhookDeliveries.id))
    .limit(limit);
}

/**
 * Queues one of a user's deliveries again, as a new delivery of the same event (the same
 * webhook-id), due now. Returns its id, or undefined when the delivery is not theirs.
 */
export async function insertResend(db: Database, userId: string, deliveryId: string, now: Date): Promise<string | undefined> {
  const at = now.toISOString();
  const [row] = await executeRows<{ id: string }>(
    db,
    sql`
    INSERT INTO webhook_deliveries (endpoint_id, event_seq, contract_id, next_attempt_at)
    SELECT d.endpoint_id, d.event_seq, d.contract_id, ${at}::timestamptz
    FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id
    WHERE d.id = ${deliveryId}::uuid AND e.user_id = ${userId}::uuid
    RETURNING id`,
  );
  return row?.id;
}

/** Attempts per endpoint of a user since a time: the per-user figures of the settings page. */
export async function attemptCountsOf(db: Database, userId: string, since: Date): Promise<Map<string, { succeeded: number; failed: number }>> {
  const rows = await db
    .select({
      endpointId: webhookAttempts.endpointId,
      succeeded: sql<number>`count(*) FILTER (WHERE ${webhookAttempts.succeeded})::int`,
      failed: sql<number>`count(*) FILTER (WHERE NOT ${webhookAttempts.succeeded})::int`,
    })
    .from(webhookAttempts)
    .where(and(eq(webhookAttempts.userId, userId), gte(webhookAttempts.attemptedAt, since)))
    .groupBy(webhookAttempts.endpointId);
  return new Map(rows.map((r) => [r.endpointId, { succeeded: Number(r.succeeded), failed: Number(r.failed) }]));
}

/** The state of one delivery (the command line waits for its test delivery). */
export async function selectDelivery(db: Database, id: string) {
  const [row] = await db
    .select({
      state: webhookDeliveries.state,
      attempts: webhookDeliveries.attempts,
      leaseExpiresAt: webhookDeliveries.leaseExpiresAt,
      lastStatusCode: webhookDeliveries.lastStatusCode,
      lastDurationMs: webhookDeliveries.lastDurationMs,
      lastError: webhookDeliveries.lastError,
      nextAttemptAt: webhookDeliveries.nextAttemptAt,
    })
    .from(webhookDeliveries)
    .where(eq(webhookDeliveries.id, id));
  return row;
}

// Retention --------------------------------------------------------------------------------

/**
 * Deletes events (with their deliveries and attempts) older than `before` that nothing is
 * still trying to deliver, and the markers of upcoming dates that have passed.
 */
export async function pruneWebhookHistory(db: Database, before: Date, today: string): Promise<void> {
  await executeRows(
    db,
    // An endpoint's own events (upcoming dates, tests) only: the event list's are removed by
    // pruneEventList (db/queries/events.ts), after EVENTS_RETENTION_DAYS, moving its horizon.
    sql`DELETE FROM webhook_events e WHERE e.occurred_at < ${before.toISOString()}::timestamptz AND e.endpoint_id IS NOT NULL
        AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_seq = e.seq AND d.state = 'pending')`,
  );
  await executeRows(db, sql`DELETE FROM webhook_upcoming_sent WHERE date < ${today}::date`);
}

// Queue depth ------------------------------------------------------------------------------

/**
 * What waits in the outbox: events not yet fanned out to deliveries, and deliveries still
 * pending (due now or waiting for a retry). Each count walks a partial index and stops at
 * `cap`, so a huge backlog costs a bounded read (the metrics scrape runs this).
 */
export async function webhookQueueDepth(db: Database, cap: number): Promise<{ events: number; deliveries: number }> {
  const [row] = await executeRows<{ events: number; deliveries: number }>(
    db,
    sql`SELECT
          (SELECT count(*) FROM (SELECT 1 FROM webhook_events WHERE fanned_out_at IS NULL LIMIT ${cap}) e)::int AS events,
          (SELECT count(*) FROM (SELECT 1 FROM webhook_deliveries WHERE state = 'pending' LIMIT ${cap}) d)::int AS deliveries`,
  );
  return row!;
}
