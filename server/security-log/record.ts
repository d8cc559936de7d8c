import type { Database } from '@/db/client';
import { insertRefusalsOncePerHour, insertSecurityEvents, type SecurityEventInsert } from '@/db/queries/security-events';
import type { SecurityEventKind } from '@/lib/key-activity';
import { afterResponse } from '@/server/after-response';
import { getDb } from '@/server/database';
import { logger } from '@/server/observability/logger';
import { countSecurityLogDropped } from '@/server/observability/metrics';
import { currentActor, personActor, type SecurityActor } from './actor';

/**
 * Writing the security log. An event about a change is written with `recordSecurityEvent`
 * on the transaction of that change, so that the change cannot happen without its event
 * (and a failed event rolls the change back). Failed sign-ins and refused addresses change
 * nothing and can come at an attacker's pace: they are queued (`queueSecurityEvent`) and
 * written once a second in one insert, off the request's path, bounded like the request
 * log (dropped and counted past MAX_PENDING).
 */

export interface SecurityEventInput {
  kind: SecurityEventKind;
  /** Whose own log shows it (null: nobody's). */
  subjectUserId: string | null;
  organizationId?: string | null;
  objectType: string;
  objectId?: string | null;
  objectLabel?: string | null;
  details?: Record<string, string | number | boolean | null>;
  /** Who acted, when not the scope's (./actor.ts). */
  actor?: SecurityActor;
  at?: Date;
}

function rowOf(event: SecurityEventInput): SecurityEventInsert {
  const actor = event.actor ?? currentActor();
  return {
    at: event.at ?? new Date(),
    kind: event.kind,
    actorKind: actor.kind,
    actorUserId: actor.userId,
    actorLabel: actor.label.slice(0, 320),
    clientAddress: actor.clientAddress?.slice(0, 64) ?? null,
    userAgent: actor.userAgent?.slice(0, 300) ?? null,
    subjectUserId: event.subjectUserId,
    organizationId: event.organizationId ?? null,
    objectType: event.objectType,
    objectId: event.objectId ?? null,
    objectLabel: event.objectLabel?.slice(0, 320) ?? null,
    details: event.details ?? null,
  };
}

/**
 * An event a person did to their own account (signed up, signed in), on `tx`: the person
 * is the actor, from the address and browser of the scope (the request that did it).
 */
export function recordOwnAccountEvent(
  tx: Database,
  kind: SecurityEventKind,
  user: { id: string; email: string },
  details?: SecurityEventInput['details'],
): Promise<void> {
  const { clientAddress, userAgent } = currentActor();
  return recordSecurityEvent(tx, {
    kind,
    subjectUserId: user.id,
    objectType: 'user',
    objectId: user.id,
    objectLabel: user.email,
    actor: personActor(user, { clientAddress, userAgent }),
    details,
  });
}

/** Runs `work` in one transaction (the change and its event). */
export function inTransaction<T>(db: Database, work: (tx: Database) => Promise<T>): Promise<T> {
  return db.transaction((tx) => work(tx as unknown as Database));
}

/** The event about a key: in its owner's log (or its creator's, for an organisation's key) and its organisation's. */
export function keyEvent(
  kind: SecurityEventKind,
  token: { id: string; name: string; userId: string | null; organizationId: string | null; createdBy?: string | null },
  details?: SecurityEventInput['details'],
): SecurityEventInput {
  return {
    kind,
    subjectUserId: token.userId ?? token.createdBy ?? null,
    organizationId: token.organizationId,
    objectType: kind.startsWith('calendar_feed') ? 'calendar_feed' : 'api_key',
    objectId: token.id,
    objectLabel: token.name,
    details,
  };
}

/** Appends an event on `tx`, the transaction of the change it records. */
export async function recordSecurityEvent(tx: Database, event: SecurityEventInput): Promise<void> {
  await insertSecurityEvents(tx, [rowOf(event)]);
}

// Batched events -------------------------------------------------------------------------

const MAX_PENDING = 10_000;
const FLUSH_INTERVAL_MS = 1000;

interface Queued {
  /** The database the event's request used (a test's own, else the process's). */
  db: Database | undefined;
  row: SecurityEventInsert;
}

interface Queue {
  rows: Queued[];
  refusals: Queued[];
  /** Refusals already queued or written by this process: key and address -> hour. */
  seen: Map<string, number>;
  scheduled: Promise<void> | undefined;
  flushing: Promise<void> | undefined;
}
const STATE = Symbol.for('contract-data-api.security-log-queue');
const g = globalThis as typeof globalThis & { [STATE]?: Queue };
const queue = (): Queue => (g[STATE] ??= { rows: [], refusals: [], seen: new Map(), scheduled: undefined, flushing: undefined });

/** Queues an event that records no change (a failed sign-in): written to `db` within a second. */
export function queueSecurityEvent(db: Database | undefined, event: SecurityEventInput): void {
  const q = queue();
  if (q.rows.length + q.refusals.length >= MAX_PENDING) return countSecurityLogDropped(1);
  q.rows.push({ db, row: rowOf(event) });
  schedule(q);
}

/**
 * Queues "key refused from a disallowed address": once per key and address per hour (this
 * process skips repeats; the insert skips those another instance wrote).
 */
export function queueAddressRefusal(db: Database | undefined, event: SecurityEventInput & { objectId: string }): void {
  const q = queue();
  const row = rowOf(event);
  const hour = Math.floor(row.at!.getTime() / 3_600_000);
  const key = `${event.objectId}|${row.clientAddress ?? ''}`;
  if (q.seen.get(key) === hour) return;
  if (q.seen.size >= MAX_PENDING) q.seen.clear();
  q.seen.set(key, hour);
  if (q.rows.length + q.refusals.length >= MAX_PENDING) return countSecurityLogDropped(1);
  q.refusals.push({ db, row });
  schedule(q);
}

function schedule(q: Queue): void {
  if (q.scheduled) return;
  q.scheduled = new Promise<void>((resolve) => {
    const timer = setTimeout(() => {
      q.scheduled = undefined;
      void flushSecurityEvents().then(resolve);
    }, FLUSH_INTERVAL_MS);
    timer.unref?.();
  });
  const batch = q.scheduled;
  afterResponse(() => batch, { msg: 'could not write the security log' });
}

/** Writes what is queued now. Never rejects. */
export async function flushSecurityEvents(): Promise<void> {
  const q = queue();
  while (q.flushing) await q.flushing;
  if (q.rows.length === 0 && q.refusals.length === 0) return;
  const { rows, refusals } = q;
  q.rows = [];
  q.refusals = [];
  q.flushing = (async () => {
    const byDb = new Map<Database | undefined, { rows: SecurityEventInsert[]; refusals: SecurityEventInsert[] }>();
    const groupOf = (db: Database | undefined) => byDb.get(db) ?? byDb.set(db, { rows: [], refusals: [] }).get(db)!;
    for (const { db, row } of rows) groupOf(db).rows.push(row);
    for (const { db, row } of refusals) groupOf(db).refusals.push(row);
    for (const [db, group] of byDb) {
      try {
        const target = db ?? (await getDb());
        await insertSecurityEvents(target, group.rows);
        await insertRefusalsOncePerHour(target, group.refusals);
      } catch (error) {
        const dropped = group.rows.length + group.refusals.length;
        countSecurityLogDropped(dropped);
        logger().warn({ dropped, reason: error instanceof Error ? error.name : 'unknown' }, 'could not write the security log; events dropped');
      }
    }
  })().finally(() => {
    q.flushing = undefined;
  });
  await q.flushing;
}
