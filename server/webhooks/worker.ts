import { randomUUID } from 'node:crypto';
import type { Database, DatabaseHandle } from '@/db/client';
import {
  claimDeliveries,
  disableEndpoint,
  fanOutEvents,
  nextDueAt,
  pruneWebhookHistory,
  recordAttempt,
  releaseLeases,
  scopeMaySee,
  selectClaimed,
  skipDelivery,
  type ClaimedDelivery,
} from '@/db/queries/webhooks';
import { DISABLE_AFTER_FAILING_DAYS, RETRY_DELAYS_SECONDS, TEST_EVENT_TYPE } from '@/lib/webhooks';
import { loadEndpointScope } from '@/server/access/scope';
import { webhookSecretBox, type SecretBox } from '@/server/access/secret-box';
import { WEBHOOK_SECRET_FORMAT } from '@/server/access/token-format';
import { config } from '@/server/config';
import { SYSTEM_ACTOR } from '@/server/security-log/actor';
import { runActivityRetention } from '@/server/security-log/retention';
import { recordSecurityEvent } from '@/server/security-log/record';
import { utcToday } from '@/server/dates';
import { pruneMailOutbox, sendDueMail } from '@/server/mail/sender';
import type { MailTransport } from '@/server/mail/transport';
import { countWebhookDelivery } from '@/server/observability/metrics';
import { logger } from '@/server/observability/logger';
import { inRootSpan } from '@/server/observability/tracing';
import { DestinationError, parseDestination, type DestinationPolicy, type Resolver } from './destination';
import { messageIdOf, payloadOf, signedHeaders } from './message';
import { sendWebhook, type SendResult } from './sender';
import { queueUpcomingEvents } from './upcoming';
import { rollingDay, rollRenewals } from '@/server/contracts/rolling';
import { pruneEvents } from '@/server/events/retention';

/**
 * The delivery worker: a plain transactional outbox in Postgres, no job library (pg-boss
 * and graphile-worker need a pg-protocol connection; the embedded PGlite database must
 * deliver too). One pass:
 *
 * 1. fan-out: the events the contracts trigger wrote become one delivery per endpoint
 *    (one fan-out at a time, so a contract's events keep their order);
 * 2. claim due deliveries with FOR UPDATE SKIP LOCKED under a lease (several workers
 *    never hold the same one), attempt each, record the result only if the lease is still
 *    ours; a worker that dies after claiming loses nothing: the lease expires and another
 *    worker claims the delivery again, with the same webhook-id;
 * 3. every few minutes, queue the upcoming-date events; every hour, prune old history;
 * 4. send the mail outbox (server/mail/sender.ts): the same passes drain both queues, so
 *    wherever webhooks are delivered (in process, `npm run worker`, the cron route) mail
 *    is sent too; a new message notifies the same channel.
 *
 * `start()` runs passes until `stop()`: at once when Postgres notifies a new event
 * (LISTEN, on the unpooled URL when one is set: db/client.ts), when the next retry is due,
 * and every POLL_INTERVAL_MS anyway (a pooler that drops notifications, a missed one).
 */

export interface WorkerOptions {
  handle: Pick<DatabaseHandle, 'db'> & Partial<Pick<DatabaseHandle, 'listen'>>;
  /** The clock of the schedule (due times, leases, "today" of upcoming dates); tests fix it. */
  clock?: () => Date;
  policy?: DestinationPolicy;
  resolve?: Resolver;
  secretBox?: SecretBox;
  /** Deliveries attempted at once by this worker. */
  concurrency?: number;
  leaseMs?: number;
  timeoutMs?: number;
  /** How often a running worker looks for work without being notified (default 2 s). */
  pollIntervalMs?: number;
  /** How mail is sent (default: the configured transport, server/mail/transport.ts). */
  mailTransport?: MailTransport;
  /** Where warnings go: a stable message and its fields (default: the process's logger). */
  log?: (msg: string, fields: Record<string, unknown>) => void;
}

/** Longer than an attempt can take (10 s) plus recording it, with room for a slow database. */
export const LEASE_MS = 60_000;
const POLL_INTERVAL_MS = 2_000;
const UPCOMING_INTERVAL_MS = 5 * 60_000;
const PRUNE_INTERVAL_MS = 60 * 60_000;
const RETENTION_INTERVAL_MS = 5 * 60_000;
/** How often evergreen contracts whose next renewal passed are rolled forward (server/contracts/rolling.ts); the list is exact between runs. */
const ROLL_INTERVAL_MS = 10 * 60_000;
const HISTORY_DAYS = 30;
const FAN_OUT_BATCH = 500;

export interface PassResult {
  fannedOut: number;
  attempted: number;
  succeeded: number;
  upcomingQueued: number;
  mailSent: number;
}

export class WebhookWorker {
  private readonly db: Database;
  private readonly clock: () => Date;
  private readonly concurrency: number;
  private readonly leaseMs: number;
  private readonly log: (msg: string, fields: Record<string, unknown>) => void;
  private lastUpcoming = -Infinity;
  private lastPrune = -Infinity;
  private lastRetention = -Infinity;
  private lastRoll = -Infinity;
  private running = false;
  private stopped = true;
  private wake: (() => void) | undefined;
  /** A notification came while a pass was running: run another one at once. */
  private notified = false;
  private loopDone: Promise<void> | undefined;
  private unlisten: (() => Promise<void>) | undefined;
  private readonly heldTokens = new Set<string>();

  constructor(private readonly options: WorkerOptions) {
    this.db = options.handle.db;
    this.clock = options.clock ?? (() => new Date());
    this.concurrency = options.concurrency ?? 8;
    this.leaseMs = options.leaseMs ?? LEASE_MS;
    this.log = options.log ?? ((msg, fields) => logger().warn(fields, msg));
  }

  private policy(): DestinationPolicy {
    if (this.options.policy) return this.options.policy;
    const { allowPrivateUrls, allowHttp } = config().webhooks;
    return { allowPrivate: allowPrivateUrls, allowHttp };
  }

  /**
   * One pass: fan out every waiting event, deliver everything due, and the periodic chores.
   * `until` (epoch ms) stops claiming new deliveries after that time (the cron route's budget).
   */
  async runOnce(options: { until?: number } = {}): Promise<PassResult> {
    const result: PassResult = { fannedOut: 0, attempted: 0, succeeded: 0, upcomingQueued: 0, mailSent: 0 };
    const now = this.clock();
    if (now.getTime() - this.lastUpcoming >= UPCOMING_INTERVAL_MS) {
      this.lastUpcoming = now.getTime();
      result.upcomingQueued = await queueUpcomingEvents(this.db, now);
    }
    for (;;) {
      const handled = await fanOutEvents(this.db, this.clock(), FAN_OUT_BATCH);
      if (handled > 0) result.fannedOut += handled;
      if (handled < FAN_OUT_BATCH) break;
    }
    // Until nothing is due: a success may free the next event of the same contract.
    while (options.until === undefined || Date.now() < options.until) {
      const outcomes = await this.claimAndDeliver();
      if (outcomes.length === 0) break;
      result.attempted += outcomes.length;
      result.succeeded += outcomes.filter(Boolean).length;
    }
    result.mailSent = await this.sendMail(options.until);
    if (now.getTime() - this.lastPrune >= PRUNE_INTERVAL_MS) {
      this.lastPrune = now.getTime();
      await pruneWebhookHistory(this.db, new Date(now.getTime() - HISTORY_DAYS * 86_400_000), utcToday(now));
      await pruneEvents(this.db, new Date(now.getTime() - config().eventsRetentionDays * 86_400_000), options.until);
      await pruneMailOutbox(this.db, now);
    }
    if (now.getTime() - this.lastRoll >= ROLL_INTERVAL_MS) {
      this.lastRoll = now.getTime();
      await rollRenewals(this.db, rollingDay(now), options.until).catch((error: unknown) =>
        this.log('rolling renewals forward failed; retried at the next interval', { reason: error instanceof Error ? error.name : 'unknown' }),
      );
    }
    // The security log, request log and usage counts (server/security-log/retention.ts).
    if (now.getTime() - this.lastRetention >= RETENTION_INTERVAL_MS) {
      this.lastRetention = now.getTime();
      // Its failure must not stop deliveries: warned, and tried again next time.
      await runActivityRetention(this.db, now).catch((error: unknown) =>
        this.log('activity retention failed; retried at the next interval', { reason: error instanceof Error ? error.name : 'unknown' }),
      );
    }
    return result;
  }

  /** The mail outbox's share of a pass; its failure does not stop the webhooks' (and the reverse). */
  private async sendMail(until?: number): Promise<number> {
    try {
      return (await sendDueMail(this.db, { now: this.clock, transport: this.options.mailTransport, until })).sent;
    } catch (error) {
      this.log('mail outbox pass failed', { err: error });
      return 0;
    }
  }

  /**
   * Attempts one delivery now if it is due and free (a test event, a resend): true when it
   * was attempted here, false when it is not due, held by another worker or waiting behind
   * an earlier delivery of the same contract.
   */
  async deliverNow(deliveryId: string): Promise<boolean> {
    return (await this.claimAndDeliver(deliveryId)).length > 0;
  }

  /** Claims up to `concurrency` due deliveries (or the one given) and attempts them; one outcome per attempt. */
  private async claimAndDeliver(deliveryId?: string): Promise<boolean[]> {
    const leaseToken = randomUUID();
    const ids = await claimDeliveries(this.db, { now: this.clock(), leaseMs: this.leaseMs, limit: deliveryId ? 1 : this.concurrency, leaseToken, deliveryId });
    if (ids.length === 0) return [];
    this.heldTokens.add(leaseToken);
    try {
      const claimed = await selectClaimed(this.db, ids);
      return await Promise.all(claimed.map((delivery) => this.attempt(delivery, leaseToken)));
    } finally {
      this.heldTokens.delete(leaseToken);
    }
  }

  private async attempt(delivery: ClaimedDelivery, leaseToken: string): Promise<boolean> {
    try {
      if (delivery.eventType !== TEST_EVENT_TYPE) {
        // The tenant rule at delivery time: the owner's memberships of now, narrowed by the
        // endpoint's access and the organisations' policy.
        const scope = await loadEndpointScope(this.db, delivery.endpointId);
        if (!scope || !(await scopeMaySee(this.db, scope, delivery.ownerId, delivery.organizationId))) {
          await skipDelivery(this.db, delivery.id, leaseToken, 'Not sent: you can no longer see this contract.');
          countWebhookDelivery('skipped');
          return false;
        }
      }
      const outcome = await this.send(delivery);
      await this.record(delivery, leaseToken, outcome);
      countWebhookDelivery(outcome.ok ? 'succeeded' : 'failed');
      return outcome.ok;
    } catch (error) {
      // The lease expires and the delivery is tried again; the log line carries no secret
      // (the logger's error serializer leaves a failed statement's parameters out).
      this.log('webhook delivery could not be attempted', { delivery_id: delivery.id, err: error });
      countWebhookDelivery('error');
      return false;
    }
  }

  private async send(delivery: ClaimedDelivery): Promise<SendResult> {
    const failed = (error: string): SendResult => ({ ok: false, statusCode: null, durationMs: 0, response: null, error });
    let url: URL;
    try {
      url = parseDestination(delivery.url, this.policy());
    } catch (error) {
      return failed(error instanceof DestinationError ? error.message : 'Invalid URL.');
    }
    let keys: Buffer[];
    try {
      keys = this.signingKeys(delivery);
    } catch {
      return failed('The signing secret cannot be decrypted (the encryption key changed): rotate the secret.');
    }
    const body = payloadOf({ id: delivery.eventId, type: delivery.eventType, occurredAt: delivery.occurredAt, contract: delivery.contract, extra: delivery.extra });
    // The signature's timestamp is the real time of sending (receivers compare it with theirs).
    const headers = signedHeaders(keys, messageIdOf(delivery.eventId), Math.floor(Date.now() / 1000), body);
    return sendWebhook(url, headers, body, { policy: this.policy(), resolve: this.options.resolve, timeoutMs: this.options.timeoutMs });
  }

  /** The current secret's key, and the previous one's while it is still valid after a rotation. */
  private signingKeys(delivery: ClaimedDelivery): Buffer[] {
    const box = this.options.secretBox ?? webhookSecretBox();
    const keys = [WEBHOOK_SECRET_FORMAT.keyOf(box.open(delivery.secretCiphertext, delivery.endpointId))];
    if (delivery.previousSecretCiphertext && delivery.previousSecretExpiresAt && delivery.previousSecretExpiresAt.getTime() > this.clock().getTime()) {
      keys.push(WEBHOOK_SECRET_FORMAT.keyOf(box.open(delivery.previousSecretCiphertext, delivery.endpointId)));
    }
    return keys;
  }

  private async record(delivery: ClaimedDelivery, leaseToken: string, outcome: SendResult): Promise<void> {
    const attemptedAt = this.clock();
    const attemptNumber = delivery.attempts + 1;
    const retryDelay = outcome.ok ? undefined : RETRY_DELAYS_SECONDS[attemptNumber - 1];
    const run = await recordAttempt(this.db, {
      deliveryId: delivery.id,
      leaseToken,
      endpointId: delivery.endpointId,
      userId: delivery.userId,
      attemptedAt,
      succeeded: outcome.ok,
      statusCode: outcome.statusCode,
      durationMs: outcome.durationMs,
      response: outcome.response,
      error: outcome.error,
      state: outcome.ok ? 'succeeded' : retryDelay === undefined ? 'failed' : 'pending',
      nextAttemptAt: retryDelay === undefined ? null : new Date(attemptedAt.getTime() + retryDelay * 1000),
    });
    const since = run?.failingSince;
    if (!outcome.ok && since && attemptedAt.getTime() - since.getTime() >= DISABLE_AFTER_FAILING_DAYS * 86_400_000) {
      const reason = `Disabled on ${attemptedAt.toISOString().slice(0, 16).replace('T', ' ')} UTC: every delivery since ${since.toISOString().slice(0, 16).replace('T', ' ')} UTC failed (${DISABLE_AFTER_FAILING_DAYS} days). Last error: ${outcome.error ?? 'unknown'}`;
      await disableEndpoint(this.db, delivery.endpointId, reason, attemptedAt, (tx) =>
        recordSecurityEvent(tx, {
          kind: 'webhook_endpoint.disabled',
          subjectUserId: delivery.userId,
          objectType: 'webhook_endpoint',
          objectId: delivery.endpointId,
          objectLabel: delivery.url,
          details: { failing_since: since.toISOString() },
          at: attemptedAt,
          actor: SYSTEM_ACTOR,
        }),
      );
    }
  }

  // Running until stopped ------------------------------------------------------------------

  /** Runs passes until stop(): on notification, when a retry is due, and every 2 s. */
  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    void this.listen();
    this.loopDone = this.loop();
  }

  private async listen(): Promise<void> {
    if (!this.options.handle.listen) return;
    try {
      this.unlisten = await this.options.handle.listen('webhook_events', () => {
        this.notified = true;
        this.wake?.();
      });
      if (this.stopped) await this.unlisten();
    } catch (error) {
      // LISTEN may be refused (a pooler without an unpooled URL): the poll still delivers.
      this.log('webhook worker cannot LISTEN, polling instead', { poll_interval_ms: POLL_INTERVAL_MS, err: error });
    }
  }

  private async loop(): Promise<void> {
    let failures = 0;
    const pollMs = this.options.pollIntervalMs ?? POLL_INTERVAL_MS;
    while (!this.stopped) {
      let delayMs = pollMs;
      try {
        this.running = true;
        // A pass woken by a new event is a trace of its own (its statements, its
        // deliveries); the passes of the poll are not: a trace every 2 s would be noise.
        const woken = this.notified;
        this.notified = false;
        await (woken ? inRootSpan('webhook pass', () => this.runOnce()) : this.runOnce());
        failures = 0;
        const due = await nextDueAt(this.db);
        if (due) delayMs = Math.min(delayMs, Math.max(0, due.getTime() - this.clock().getTime()));
      } catch (error) {
        failures++;
        // One line per failed pass, then less often while the database stays away.
        if (failures === 1 || failures % 30 === 0) this.log('webhook worker pass failed', { failures, err: error });
        delayMs = Math.min(30_000, pollMs * failures);
      } finally {
        this.running = false;
      }
      if (this.stopped) break;
      if (this.notified) continue;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, delayMs);
        timer.unref?.();
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.wake = undefined;
    }
  }

  /** Stops after the pass under way; deliveries claimed and not attempted are given back. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.wake?.();
    await this.loopDone;
    await this.unlisten?.().catch(() => {});
    for (const token of this.heldTokens) await releaseLeases(this.db, token).catch(() => {});
  }

  get busy(): boolean {
    return this.running;
  }
}
