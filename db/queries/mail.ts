import { and, asc, eq, inArray, isNull, lte, or, sql } from 'drizzle-orm';
import { executeRows, type Database } from '../client';
import { mailOutbox } from '../schema';

/**
 * Data access of the mail outbox (server/mail/): queue, claim under a lease, then delete
 * a sent message or record a failed attempt. The schedule is server/mail/'s.
 */

/** The channel the worker listens on (server/webhooks/worker.ts): a new message wakes it at commit. */
const WORKER_CHANNEL = 'webhook_events';

export async function insertMail(db: Database, message: { recipient: string; subject: string; text: string; html: string }): Promise<string> {
  const [row] = await db.insert(mailOutbox).values(message).returning({ id: mailOutbox.id });
  await db.execute(sql`select pg_notify(${WORKER_CHANNEL}, 'mail')`);
  return row!.id;
}

/** Claims up to `limit` due messages for `leaseMs` (FOR UPDATE SKIP LOCKED: two workers never hold one). */
export async function claimMail(db: Database, claim: { now: Date; leaseMs: number; limit: number; leaseToken: string }): Promise<string[]> {
  const now = claim.now.toISOString();
  const rows = await executeRows<{ id: string }>(
    db,
    sql`
    WITH due AS (
      SELECT id FROM mail_outbox
      WHERE failed_at IS NULL AND next_attempt_at <= ${now}::timestamptz
        AND (lease_expires_at IS NULL OR lease_expires_at <= ${now}::timestamptz)
      ORDER BY next_attempt_at
      LIMIT ${claim.limit}
      FOR UPDATE SKIP LOCKED
    )
    UPDATE mail_outbox SET lease_token = ${claim.leaseToken}::uuid,
      lease_expires_at = ${new Date(claim.now.getTime() + claim.leaseMs).toISOString()}::timestamptz
    WHERE id IN (SELECT id FROM due)
    RETURNING id`,
  );
  return rows.map((r) => r.id);
}

export interface ClaimedMail {
  id: string;
  recipient: string;
  subject: string;
  text: string;
  html: string;
  attempts: number;
}

export function selectClaimedMail(db: Database, ids: string[]): Promise<ClaimedMail[]> {
  if (ids.length === 0) return Promise.resolve([]);
  return db
    .select({ id: mailOutbox.id, recipient: mailOutbox.recipient, subject: mailOutbox.subject, text: mailOutbox.text, html: mailOutbox.html, attempts: mailOutbox.attempts })
    .from(mailOutbox)
    .where(inArray(mailOutbox.id, ids))
    .orderBy(asc(mailOutbox.createdAt));
}

/** A sent message leaves nothing behind (its text may carry a single-use link). */
export async function deleteSentMail(db: Database, id: string, leaseToken: string): Promise<void> {
  await db.delete(mailOutbox).where(and(eq(mailOutbox.id, id), eq(mailOutbox.leaseToken, leaseToken)));
}

/** A failed attempt: tried again at `nextAttemptAt`, or given up (null): then its body is dropped. */
export async function recordMailFailure(db: Database, failure: { id: string; leaseToken: string; error: string; now: Date; nextAttemptAt: Date | null }): Promise<void> {
  await db
    .update(mailOutbox)
    .set({
      attempts: sql`${mailOutbox.attempts} + 1`,
      lastError: failure.error.slice(0, 500),
      leaseToken: null,
      leaseExpiresAt: null,
      ...(failure.nextAttemptAt ? { nextAttemptAt: failure.nextAttemptAt } : { failedAt: failure.now, text: '', html: '' }),
    })
    .where(and(eq(mailOutbox.id, failure.id), eq(mailOutbox.leaseToken, failure.leaseToken)));
}

/** Gives back what a stopping worker claimed and did not attempt. */
export async function releaseMailLeases(db: Database, leaseToken: string): Promise<void> {
  await db.update(mailOutbox).set({ leaseToken: null, leaseExpiresAt: null }).where(eq(mailOutbox.leaseToken, leaseToken));
}

/** Messages given up on before `before` (their rows only say that something failed). */
export async function pruneFailedMail(db: Database, before: Date): Promise<void> {
  await db.delete(mailOutbox).where(and(lte(mailOutbox.failedAt, before)));
}

/** Messages waiting to be sent (tests, the queue's depth). */
export async function countQueuedMail(db: Database): Promise<number> {
  const [row] = await db.select({ n: sql<number>`count(*)::int` }).from(mailOutbox).where(or(isNull(mailOutbox.failedAt)));
  return Number(row?.n ?? 0);
}
