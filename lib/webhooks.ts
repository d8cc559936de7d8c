/**
 * The webhooks vocabulary shared by the service, the settings page and the documentation:
 * event types, the renewal offsets, the retry schedule and the limits.
 */

export const WEBHOOK_EVENT_TYPES = [
  'contract.created',
  'contract.updated',
  'contract.deleted',
  'contract.extraction_completed',
  'contract.renewal_upcoming',
  'contract.expiration_upcoming',
  'contract.notice_deadline_upcoming',
] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/** Sent by "Send test event" (Settings, `npm run webhook -- test`) only; never subscribed to. */
export const TEST_EVENT_TYPE = 'webhook.test';

export const WEBHOOK_EVENT_DESCRIPTIONS: Record<WebhookEventType, string> = {
  'contract.created': 'A contract was uploaded.',
  'contract.updated': 'Fields of a contract changed (their names are in data.changed_fields).',
  'contract.deleted': 'A contract was deleted, or moved out of what this endpoint sees (to another organisation or owner). Its id and organization_id only.',
  'contract.extraction_completed': 'Extraction finished: the contract became completed and has its extracted data.',
  'contract.renewal_upcoming': "A contract's next renewal (next_renewal_date: an auto-renewing contract rolled forward by its term) is within one of the endpoint's offsets.",
  'contract.expiration_upcoming': "A contract's expiration date is within one of the endpoint's offsets.",
  'contract.notice_deadline_upcoming': "A contract's notice deadline (notice_deadline: the last day notice stops its next renewal) is within one of the endpoint's offsets.",
};

/** Days before a renewal, expiration or notice deadline at which the *_upcoming events fire, by default. */
export const DEFAULT_UPCOMING_OFFSETS = [90, 30, 7] as const;
export const MAX_UPCOMING_OFFSETS = 5;
export const MAX_UPCOMING_OFFSET_DAYS = 365;

/** Endpoints per user. */
export const MAX_WEBHOOK_ENDPOINTS = 10;
export const WEBHOOK_URL_MAX_LENGTH = 2048;

/**
 * Waits before each retry after a failed attempt, in seconds: 8 attempts over about 28
 * hours. The first attempt is made as soon as the event is committed.
 */
export const RETRY_DELAYS_SECONDS = [5, 5 * 60, 30 * 60, 2 * 3600, 5 * 3600, 10 * 3600, 10 * 3600] as const;

/** An endpoint whose attempts have all failed for this long is disabled. */
export const DISABLE_AFTER_FAILING_DAYS = 5;

/** After a rotation, the previous secret still signs (a second signature) for this long. */
export const PREVIOUS_SECRET_VALID_HOURS = 24;

/** Each attempt: how long the receiver has to answer, and how much of its answer is kept. */
export const DELIVERY_TIMEOUT_SECONDS = 10;
export const RESPONSE_EXCERPT_BYTES = 4096;

export type WebhookEndpointStatus = 'active' | 'paused' | 'disabled';
export type WebhookDeliveryState = 'pending' | 'succeeded' | 'failed' | 'skipped';
