/**
 * The vocabulary of what a key did (per-key usage, the request log) and of the security
 * log, shared by the server and the settings pages.
 */

/** How a request ended, as the usage counts split it. */
export const USAGE_OUTCOMES = ['2xx', '304', '4xx', '429', '5xx'] as const;
export type UsageOutcome = (typeof USAGE_OUTCOMES)[number];

/** Which quota a request belongs to: list and get-one ("read"), or the CSV export. */
export const USAGE_OPERATIONS = ['read', 'export'] as const;
export type UsageOperation = (typeof USAGE_OPERATIONS)[number];

/** The outcome of an answer's status: 304 and 429 apart, other 4xx together; 1xx and other 3xx count as served. */
export function outcomeOf(status: number): UsageOutcome {
  if (status === 304) return '304';
  if (status === 429) return '429';
  if (status >= 500) return '5xx';
  if (status >= 400) return '4xx';
  return '2xx';
}

/** Hours of hourly counts and days of daily counts kept and shown. */
export const USAGE_HOURS = 48;
export const USAGE_DAYS = 90;

/** One bucket of counts: its start (ISO), then per operation and outcome. */
export type OutcomeCounts = Record<UsageOutcome, number>;
export interface UsageBucket {
  start: string;
  read: OutcomeCounts;
  export: OutcomeCounts;
}

/** The request log: how many of each key's requests are kept, and for how long at least. */
export const REQUEST_LOG_PER_KEY = 1000;
export const REQUEST_LOG_DAYS = 7;
export const REQUEST_LOG_PAGE_SIZE = 50;

/** The status classes the request log filters by. */
export const STATUS_CLASSES = ['2xx', '3xx', '4xx', '5xx'] as const;
export type StatusClass = (typeof STATUS_CLASSES)[number];

/** A request id as the API writes it (X-Request-Id, the error body's request_id). */
export const REQUEST_ID_PATTERN = /^req_[0-9a-f]{32}$/;

/** One request of the log, as the settings page shows it. */
export interface LoggedRequest {
  at: string;
  method: string;
  path: string;
  status: number;
  errorCode: string | null;
  durationMs: number;
  requestId: string;
  clientAddress: string | null;
  userAgent: string | null;
  bytes: number;
  keyId: string;
  keyName: string;
}

// Security log --------------------------------------------------------------------------

/** Every kind of event the security log records. */
export const SECURITY_EVENT_KINDS = [
  'sign_in.succeeded',
  'sign_in.failed',
  'sign_out.everywhere',
  'sign_up',
  'api_key.created',
  'api_key.edited',
  'api_key.rolled',
  'api_key.revoked',
  'api_key.expired',
  'api_key.address_refused',
  'calendar_feed.created',
  'calendar_feed.revoked',
  'webhook_endpoint.created',
  'webhook_endpoint.changed',
  'webhook_endpoint.deleted',
  'webhook_endpoint.secret_rotated',
  'webhook_endpoint.disabled',
  'organization.policy_changed',
  'api_key.access_removed',
] as const;
export type SecurityEventKind = (typeof SECURITY_EVENT_KINDS)[number];

export const SECURITY_EVENT_LABELS: Record<SecurityEventKind, string> = {
  'sign_in.succeeded': 'Signed in',
  'sign_in.failed': 'Sign-in failed',
  'sign_out.everywhere': 'Signed out everywhere',
  'sign_up': 'Signed up',
  'api_key.created': 'API key created',
  'api_key.edited': 'API key edited',
  'api_key.rolled': 'API key rolled',
  'api_key.revoked': 'API key revoked',
  'api_key.expired': 'API key expired',
  'api_key.address_refused': 'API key refused from an address',
  'calendar_feed.created': 'Calendar feed created',
  'calendar_feed.revoked': 'Calendar feed revoked',
  'webhook_endpoint.created': 'Webhook endpoint created',
  'webhook_endpoint.changed': 'Webhook endpoint changed',
  'webhook_endpoint.deleted': 'Webhook endpoint deleted',
  'webhook_endpoint.secret_rotated': 'Webhook secret rotated',
  'webhook_endpoint.disabled': 'Webhook endpoint disabled after failures',
  'organization.policy_changed': 'Organisation policy changed',
  'api_key.access_removed': "An admin removed a key's access",
};

export const SECURITY_LOG_PAGE_SIZE = 50;
/** Rows of one CSV download of the security log. */
export const SECURITY_LOG_CSV_MAX_ROWS = 10_000;

/** One event as the security log page shows it. */
export interface SecurityEventRow {
  id: string;
  at: string;
  kind: SecurityEventKind;
  actor: string;
  clientAddress: string | null;
  userAgent: string | null;
  objectType: string;
  objectId: string | null;
  object: string | null;
  details: Record<string, string | number | boolean | null> | null;
}
