import { createHmac } from 'node:crypto';
import { detailRowOfJson } from '@/db/queries/contracts/columns';
import { toDetail } from '@/server/contracts/shape';
import { utcToday } from '@/server/dates';

/**
 * A webhook as Standard Webhooks (https://www.standardwebhooks.com) writes it: the body
 * `{type, timestamp, data}`, and the headers `webhook-id` (the same on every retry, so a
 * receiver can drop duplicates), `webhook-timestamp` (Unix seconds of this attempt) and
 * `webhook-signature` (`v1,` + base64 HMAC-SHA256 of `id.timestamp.body`, one per valid
 * secret, separated by spaces).
 */

/** What an outbox row holds of an event. */
export interface OutboxEvent {
  id: string;
  type: string;
  occurredAt: Date;
  /** The contract row as to_jsonb() wrote it; for a deletion only id and organization_id; null for a test event. */
  contract: Record<string, unknown> | null;
  /** Added to `data`: changed_fields, the upcoming date and offset, a test event's contents. */
  extra: Record<string, unknown> | null;
}

/** The `webhook-id` of an event (msg_ + its UUID's 32 hex digits). */
export function messageIdOf(eventId: string): string {
  return `msg_${eventId.replaceAll('-', '')}`;
}

/**
 * The body: `data.contract` is the contract as GET /api/v1/contracts/{id} shows it (through
 * the same toDetail), as it was when the event happened (its computed renewal dates on the
 * event's UTC day). The same event gives the same bytes on every attempt.
 */
export function payloadOf(event: OutboxEvent): string {
  return JSON.stringify({ type: event.type, timestamp: event.occurredAt.toISOString(), data: eventDataOf(event) });
}

/** An event's `data`, for a webhook's body and the event list (GET /api/v1/events) alike. */
export function eventDataOf(event: Pick<OutboxEvent, 'type' | 'occurredAt' | 'contract' | 'extra'>): Record<string, unknown> {
  if (event.contract === null) return { ...event.extra };
  if (event.type === 'contract.deleted') return { contract: { id: event.contract.id, organization_id: event.contract.organization_id ?? null } };
  // The computed renewal dates on the event's own UTC day, not the attempt's: a retry the next day sends the same bytes.
  return { contract: toDetail(detailRowOfJson(event.contract), utcToday(event.occurredAt)), ...event.extra };
}

/** `v1,<base64 HMAC-SHA256>` of one message under one key. */
export function signatureOf(key: Buffer, messageId: string, timestampSeconds: number, body: string): string {
  return `v1,${createHmac('sha256', key).update(`${messageId}.${timestampSeconds}.${body}`).digest('base64')}`;
}

/** The three headers of one attempt, signed with every key given (the current secret first). */
export function signedHeaders(keys: Buffer[], messageId: string, timestampSeconds: number, body: string): Record<string, string> {
  return {
    'webhook-id': messageId,
    'webhook-timestamp': String(timestampSeconds),
    'webhook-signature': keys.map((key) => signatureOf(key, messageId, timestampSeconds, body)).join(' '),
  };
}
