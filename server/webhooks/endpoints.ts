import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import type { Database } from '@/db/client';
import { withUserLocked } from '@/db/queries/tokens';
import {
  attemptCountsOf,
  countEndpoints,
  deleteEndpoint as deleteEndpointRow,
  insertEndpoint,
  insertResend,
  insertTestDelivery,
  selectDelivery,
  selectDeliveryLog,
  selectEndpointOf,
  selectEndpointSecrets,
  selectEndpointsOf,
  updateEndpoint,
  type DeliveryLogRow,
  type EndpointRow,
} from '@/db/queries/webhooks';
import {
  DEFAULT_UPCOMING_OFFSETS,
  DELIVERY_TIMEOUT_SECONDS,
  MAX_UPCOMING_OFFSET_DAYS,
  MAX_UPCOMING_OFFSETS,
  MAX_WEBHOOK_ENDPOINTS,
  PREVIOUS_SECRET_VALID_HOURS,
  WEBHOOK_EVENT_TYPES,
  WEBHOOK_URL_MAX_LENGTH,
} from '@/lib/webhooks';
import type { Access } from '@/lib/key-restrictions';
import { accessInput } from '@/server/access/key-inputs';
import { checkAccess } from '@/server/access/keys';
import { webhookSecretBox } from '@/server/access/secret-box';
import { WEBHOOK_SECRET_FORMAT } from '@/server/access/token-format';
import { config } from '@/server/config';
import type { SecurityEventKind } from '@/lib/key-activity';
import { recordSecurityEvent } from '@/server/security-log/record';
import { AppError, invalidRequest } from '@/server/errors';
import { exampleContract } from '@/server/contracts/example';
import { DestinationError, parseDestination, resolveDestination, type DestinationPolicy, type Resolver } from './destination';
import { WebhookWorker } from './worker';

/**
 * Webhook endpoints as their owner manages them (Settings → Webhooks, `npm run webhook`):
 * create (the signing secret is returned once), list with the last day's figures, pause,
 * resume, rotate the secret, delete, send a test event, the delivery log and resend.
 */

// Input ------------------------------------------------------------------------------------

export const eventTypesInput = z
  .array(z.enum(WEBHOOK_EVENT_TYPES, { message: `Each event must be one of ${WEBHOOK_EVENT_TYPES.join(', ')}.` }))
  .min(1, 'Choose at least one event.')
  .refine((types) => new Set(types).size === types.length, 'Each event may be listed once.');

export const offsetsInput = z
  .array(
    z
      .int('Offsets are whole numbers of days.')
      .min(0, 'Offsets are 0 or more days.')
      .max(MAX_UPCOMING_OFFSET_DAYS, `Offsets are at most ${MAX_UPCOMING_OFFSET_DAYS} days.`),
  )
  .min(1, 'Give at least one offset.')
  .max(MAX_UPCOMING_OFFSETS, `At most ${MAX_UPCOMING_OFFSETS} offsets.`)
  .refine((offsets) => new Set(offsets).size === offsets.length, 'Each offset may be listed once.');

export const createEndpointInput = z.object({
  url: z.string().max(WEBHOOK_URL_MAX_LENGTH + 100, `At most ${WEBHOOK_URL_MAX_LENGTH} characters.`),
  eventTypes: eventTypesInput.default([...WEBHOOK_EVENT_TYPES]),
  renewalOffsets: offsetsInput.default([...DEFAULT_UPCOMING_OFFSETS]),
  // Which contracts it hears of (docs/keys.md); default everything its owner can see.
  access: accessInput.optional(),
});
export type CreateEndpointInput = z.input<typeof createEndpointInput>;

// Endpoints --------------------------------------------------------------------------------

export interface EndpointSummary extends EndpointRow {
  /** Which contracts it hears of, as the pages show it. */
  access: Access;
  /** Attempts in the last 24 hours that the endpoint accepted, and that failed. */
  last24h: { succeeded: number; failed: number };
}

export interface EndpointOptions {
  policy?: DestinationPolicy;
  resolve?: Resolver;
  now?: Date;
}

function policyOf(options: EndpointOptions): DestinationPolicy {
  if (options.policy) return options.policy;
  const { allowPrivateUrls, allowHttp } = config().webhooks;
  return { allowPrivate: allowPrivateUrls, allowHttp };
}

export async function listEndpoints(db: Database, userId: string, now = new Date()): Promise<EndpointSummary[]> {
  const [rows, counts] = await Promise.all([selectEndpointsOf(db, userId), attemptCountsOf(db, userId, new Date(now.getTime() - 86_400_000))]);
  return rows.map((row) => ({
    ...row,
    // Only while it still signs.
    previousSecretExpiresAt: row.previousSecretExpiresAt && row.previousSecretExpiresAt > now ? row.previousSecretExpiresAt : null,
    last24h: counts.get(row.id) ?? { succeeded: 0, failed: 0 },
    access: (row.accessAll ? { kind: 'all' } : { kind: 'chosen', personal: row.accessPersonal, organizationIds: row.accessOrganizationIds }) satisfies Access as Access,
  }));
}

async function endpointOf(db: Database, userId: string, id: string): Promise<EndpointRow> {
  const row = await selectEndpointOf(db, userId, id);
  if (!row) throw new AppError('not_found', 'No such webhook endpoint.');
  return row;
}

/**
 * Creates an endpoint and returns its signing secret: the only time it is shown. The URL
 * is checked (scheme, and every address its host resolves to) before anything is stored.
 */
export async function createEndpoint(db: Database, userId: string, input: CreateEndpointInput, options: EndpointOptions = {}): Promise<{ secret: string; endpoint: EndpointRow }> {
  const parsed = createEndpointInput.safeParse(input);
  if (!parsed.success) throw invalidRequest(parsed.error.issues);
  const policy = policyOf(options);
  let url: URL;
  try {
    url = parseDestination(parsed.data.url, policy);
    await resolveDestination(url, policy, options.resolve);
  } catch (error) {
    if (error instanceof DestinationError) throw new AppError('invalid_request', error.message, [{ param: 'url', message: error.message }]);
    throw error;
  }
  const access = await checkAccess(db, userId, parsed.data.access);
  const now = options.now ?? new Date();
  const id = randomUUID();
  const secret = WEBHOOK_SECRET_FORMAT.generate();
  const endpoint = await withUserLocked(db, userId, async (tx) => {
    if ((await countEndpoints(tx, userId)) >= MAX_WEBHOOK_ENDPOINTS) {
      throw new AppError('conflict', `You already have ${MAX_WEBHOOK_ENDPOINTS} webhook endpoints, the most allowed. Delete one you no longer use first.`);
    }
    const inserted = await insertEndpoint(tx, {
      id,
      userId,
      url: url.href,
      eventTypes: parsed.data.eventTypes,
      renewalOffsets: [...parsed.data.renewalOffsets].sort((a, b) => b - a),
      secretCiphertext: webhookSecretBox().seal(secret, id),
      secretHint: WEBHOOK_SECRET_FORMAT.hint(secret),
      ...accessColumns(access),
      createdAt: now,
    });
    await recordEndpointEvent(tx, 'webhook_endpoint.created', userId, id, url.href, now);
    return inserted;
  });
  return { secret, endpoint };
}

export async function deleteEndpoint(db: Database, userId: string, id: string): Promise<void> {
  await db.transaction(async (tx) => {
    const endpoint = await selectEndpointOf(tx as unknown as Database, userId, id);
    if (!endpoint) throw new AppError('not_found', 'No such webhook endpoint.');
    // The event first, while the row still says which organisations the endpoint reaches.
    await recordEndpointEvent(tx as unknown as Database, 'webhook_endpoint.deleted', userId, id, endpoint.url);
    if (!(await deleteEndpointRow(tx as unknown as Database, userId, id))) throw new AppError('not_found', 'No such webhook endpoint.');
  });
}

/** The security log's event about one of the user's endpoints, on the change's transaction. */
function recordEndpointEvent(tx: Database, kind: SecurityEventKind, userId: string, id: string, url: string, at?: Date, details?: Record<string, string>) {
  return recordSecurityEvent(tx, { kind, subjectUserId: userId, objectType: 'webhook_endpoint', objectId: id, objectLabel: url, details, at });
}

/** An update of one of the user's endpoints with its "changed" event, in one transaction. */
async function changeEndpoint(db: Database, userId: string, id: string, values: Parameters<typeof updateEndpoint>[3], now: Date, change: string) {
  return db.transaction(async (tx) => {
    const row = await updateEndpoint(tx as unknown as Database, userId, id, values, now);
    if (row) await recordEndpointEvent(tx as unknown as Database, 'webhook_endpoint.changed', userId, id, row.url, now, { change });
    return row;
  });
}

/** The access choice as the endpoint's columns. */
function accessColumns(access: Access) {
  return {
    accessAll: access.kind === 'all',
    accessPersonal: access.kind === 'chosen' && access.personal,
    accessOrganizationIds: access.kind === 'chosen' ? access.organizationIds : [],
  };
}

/**
 * Changes which contracts an endpoint hears of (docs/keys.md): from the next event on, and
 * checked again at delivery, so events already queued for contracts now outside it are
 * not sent.
 */
export async function setEndpointAccess(db: Database, userId: string, id: string, access: Access, now = new Date()): Promise<EndpointRow> {
  await endpointOf(db, userId, id);
  const checked = await checkAccess(db, userId, access);
  return (await updateEndpoint(db, userId, id, accessColumns(checked), now))!;
}

/** Pause: nothing is sent, events are kept and go out in order on resume. */
export async function pauseEndpoint(db: Database, userId: string, id: string, now = new Date()): Promise<EndpointRow> {
  const endpoint = await endpointOf(db, userId, id);
  if (endpoint.status === 'disabled') throw new AppError('conflict', 'This endpoint is disabled; resume it instead.');
  return (await changeEndpoint(db, userId, id, { status: 'paused' }, now, 'paused'))!;
}

/** Resume a paused or disabled endpoint: its run of failures starts afresh. */
export async function resumeEndpoint(db: Database, userId: string, id: string, now = new Date()): Promise<EndpointRow> {
  await endpointOf(db, userId, id);
  return (await changeEndpoint(db, userId, id, { status: 'active', disabledReason: null, failingSince: null }, now, 'resumed'))!;
}

/**
 * A new signing secret, returned once; the previous one keeps signing (a second signature
 * in webhook-signature) for PREVIOUS_SECRET_VALID_HOURS, so receivers can switch without
 * missing a delivery. A second rotation within that time drops the oldest secret.
 */
export async function rotateSecret(db: Database, userId: string, id: string, now = new Date()): Promise<{ secret: string; endpoint: EndpointRow }> {
  const secret = WEBHOOK_SECRET_FORMAT.generate();
  const endpoint = await db.transaction(async (tx) => {
    const current = await selectEndpointSecrets(tx as unknown as Database, userId, id);
    if (!current) throw new AppError('not_found', 'No such webhook endpoint.');
    const updated = await updateEndpoint(
      tx as unknown as Database,
      userId,
      id,
      {
        secretCiphertext: webhookSecretBox().seal(secret, id),
        secretHint: WEBHOOK_SECRET_FORMAT.hint(secret),
        previousSecretCiphertext: current.secretCiphertext,
        previousSecretExpiresAt: new Date(now.getTime() + PREVIOUS_SECRET_VALID_HOURS * 3_600_000),
      },
      now,
    );
    if (updated) await recordEndpointEvent(tx as unknown as Database, 'webhook_endpoint.secret_rotated', userId, id, updated.url, now);
    return updated;
  });
  return { secret, endpoint: endpoint! };
}

// Deliveries -------------------------------------------------------------------------------

export type { DeliveryLogRow };

export type DeliveryOutcome = NonNullable<Awaited<ReturnType<typeof selectDelivery>>> & { id: string };

/**
 * Attempts a delivery at once, here, when it is free (a test event, a resend), and returns
 * its state: the person who asked sees the answer without waiting for the next pass. When a
 * running worker took it first, its attempt is awaited instead (at most one attempt's time).
 * A delivery waiting behind an earlier one of the same contract stays queued.
 */
async function attemptNow(db: Database, deliveryId: string, options: EndpointOptions): Promise<DeliveryOutcome> {
  const attempted = await new WebhookWorker({ handle: { db }, policy: options.policy, resolve: options.resolve }).deliverNow(deliveryId);
  let delivery = (await selectDelivery(db, deliveryId))!;
  const until = Date.now() + (DELIVERY_TIMEOUT_SECONDS + 2) * 1000;
  while (!attempted && delivery.state === 'pending' && delivery.attempts === 0 && delivery.leaseExpiresAt !== null && Date.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    delivery = (await selectDelivery(db, deliveryId))!;
  }
  return { id: deliveryId, ...delivery };
}

/** Sends a `webhook.test` event to one of the user's active endpoints. */
export async function sendTestEvent(db: Database, userId: string, id: string, options: EndpointOptions = {}): Promise<DeliveryOutcome> {
  const endpoint = await endpointOf(db, userId, id);
  if (endpoint.status !== 'active') throw new AppError('conflict', `This endpoint is ${endpoint.status}: resume it to send a test event.`);
  const deliveryId = await insertTestDelivery(
    db,
    id,
    { endpoint_id: id, message: 'A test event. Its contract is an example, not one of yours.', contract: exampleContract },
    options.now ?? new Date(),
  );
  return attemptNow(db, deliveryId, options);
}

/** Queues one of the user's deliveries again (same event, same webhook-id) and attempts it. */
export async function resendDelivery(db: Database, userId: string, deliveryId: string, options: EndpointOptions = {}): Promise<DeliveryOutcome> {
  const resent = await insertResend(db, userId, deliveryId, options.now ?? new Date());
  if (!resent) throw new AppError('not_found', 'No such delivery.');
  return attemptNow(db, resent, options);
}

export const DELIVERY_LOG_LIMIT = 50;

/** The newest deliveries of one of the user's endpoints. */
export async function deliveryLog(db: Database, userId: string, endpointId: string): Promise<DeliveryLogRow[]> {
  await endpointOf(db, userId, endpointId);
  return selectDeliveryLog(db, userId, endpointId, DELIVERY_LOG_LIMIT);
}
