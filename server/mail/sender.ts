import { randomUUID } from 'node:crypto';
import type { Database } from '@/db/client';
import { claimMail, deleteSentMail, pruneFailedMail, recordMailFailure, releaseMailLeases, selectClaimedMail } from '@/db/queries/mail';
import { logger } from '@/server/observability/logger';
import { mailTransport, type MailTransport } from './transport';

/**
 * Sends what the outbox holds (one call: everything due, a batch at a time). A message is
 * claimed under a lease (FOR UPDATE SKIP LOCKED), sent, then its row deleted; a failure is
 * tried again after MAIL_RETRY_SECONDS, then given up (its body dropped, one warning). A
 * worker that dies after claiming loses nothing: the lease expires and any worker sends it.
 * At-least-once: a crash between sending and deleting sends it twice.
 */
export const MAIL_RETRY_SECONDS = [15, 60, 300, 900, 3600, 3 * 3600, 6 * 3600, 12 * 3600];
const LEASE_MS = 60_000;
const BATCH = 10;
const KEEP_FAILED_MS = 7 * 86_400_000;

export interface MailPassOptions {
  now?: () => Date;
  transport?: MailTransport;
  /** Stop claiming after this time (epoch ms; the cron route's budget). */
  until?: number;
}

export interface MailPassResult {
  attempted: number;
  sent: number;
}

export async function sendDueMail(db: Database, options: MailPassOptions = {}): Promise<MailPassResult> {
  const now = options.now ?? (() => new Date());
  const transport = options.transport ?? mailTransport();
  const result: MailPassResult = { attempted: 0, sent: 0 };
  while (options.until === undefined || Date.now() < options.until) {
    const leaseToken = randomUUID();
    const ids = await claimMail(db, { now: now(), leaseMs: LEASE_MS, limit: BATCH, leaseToken });
    if (ids.length === 0) break;
    try {
      for (const message of await selectClaimedMail(db, ids)) {
        result.attempted++;
        try {
          await transport.send({ to: message.recipient, subject: message.subject, text: message.text, html: message.html });
        } catch (error) {
          const delay = MAIL_RETRY_SECONDS[message.attempts];
          const at = now();
          await recordMailFailure(db, { id: message.id, leaseToken, error: describe(error), now: at, nextAttemptAt: delay === undefined ? null : new Date(at.getTime() + delay * 1000) });
          // The error's code and message only: never the message's text (it may hold a link).
          logger().warn({ mail_id: message.id, attempt: message.attempts + 1, given_up: delay === undefined, reason: describe(error) }, 'mail could not be sent');
          continue;
        }
        await deleteSentMail(db, message.id, leaseToken);
        result.sent++;
      }
    } finally {
      await releaseMailLeases(db, leaseToken);
    }
  }
  return result;
}

/** Drops the rows of messages given up on a week ago (the worker's hourly chores). */
export async function pruneMailOutbox(db: Database, now: Date): Promise<void> {
  await pruneFailedMail(db, new Date(now.getTime() - KEEP_FAILED_MS));
}

function describe(error: unknown): string {
  if (!(error instanceof Error)) return 'unknown error';
  const code = (error as { code?: unknown; responseCode?: unknown }).responseCode ?? (error as { code?: unknown }).code;
  // SMTP replies can quote the recipient: the first line, bounded.
  const line = error.message.split('\n')[0]!.replace(/[^\s<>@]+@[^\s<>@]+/g, '(address)').slice(0, 300);
  return `${code ? `${String(code)}: ` : ''}${line}`;
}
