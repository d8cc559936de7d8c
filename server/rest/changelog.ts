import 'server-only';

/**
 * The changelog of /api/v1: the one list of what changed in the API since the
 * specification, newest first. Everything else is derived from it:
 *
 * - the OpenAPI document's `info.version` (`changelogVersion`), so adding an entry changes it;
 * - the "Changelog" section of the document's introduction, which the reference page
 *   (/docs/api) shows (./changelog-markdown.ts);
 * - the page /docs/changelog, whose anchors the deprecation `Link` headers point at;
 * - docs/changelog.md (`npm run changelog:generate`; tests/docs/changelog.test.ts fails
 *   when it is out of date).
 *
 * A TypeScript module rather than a Markdown file read at run time: a deployment that
 * traces files (Vercel) carries only what is imported or listed in next.config.mjs.
 *
 * The policy behind the kinds is docs/api-changes.md. In short: `added` is anything a
 * client written against the earlier API keeps working with; `changed` is a change of
 * behaviour or of the document that is not a plain addition (say why it is safe, or say
 * that it is not); `deprecated` announces something with its sunset (and has an entry in
 * ./deprecations.ts); `removed` takes out something deprecated after its sunset; `fixed`
 * makes the API do what it already said. Every entry but `fixed` raises the minor
 * version, a `fixed` raises the patch; the major is the path's (/api/v1) and only a
 * /api/v2 changes it.
 */

export type ChangeKind = 'release' | 'added' | 'changed' | 'deprecated' | 'removed' | 'fixed';

export interface ChangelogEntry {
  /** The day the change reached the API (its commit), YYYY-MM-DD. */
  date: string;
  /** Stable id of the entry: its anchor on /docs/changelog and in docs/changelog.md. Never reuse or rename one. */
  anchor: string;
  kind: ChangeKind;
  title: string;
  /** What a client sees, in Markdown: inline code and plain text, paragraphs split by a blank line. */
  body: string;
}

/** Newest first. Add new entries at the top; never edit the meaning of a published one. */
export const CHANGELOG: readonly ChangelogEntry[] = [
  {
    date: '2026-12-06',
    anchor: 'event-list-access-and-export-cursor',
    kind: 'changed',
    title: 'The event list tells a key what it lost and gained; the export names where the events take over',
    body:
      'Two event types in a key\'s own list: `access.reduced` when what the key may see shrinks (its owner left an organisation, its access was edited, an organisation removed its access or stopped members\' personal keys reading it), naming the organisations in `data.organization_ids` and `data.personal: true` when its owner\'s personal contracts left; a copy drops those contracts. `access.expanded` when it grows: fetch those organisations\' contracts. Each stands at the moment of the change, and only the key concerned sees it; a page ends right after one (with fewer than `limit` events if need be), so that the next page is read with the access as it changed. A change rather than an addition because the `types` parameter\'s pattern in the document widened to the two new names: nothing a client sent before is refused, and a client that branches on `type` should ignore types it does not know.\n\nThe export answers `X-Events-Cursor`: the place in the event list just before its first row. A copy made from the file and then from the event list from that cursor stays equal to what the key lists. `"format": "ndjson"` in the export body answers one contract per line, each exactly the get-one `contract` (`application/x-ndjson`), for a program that keeps an exact copy; `columns`, `date_format` and `bom` stay CSV\'s and are refused with it. The typed client\'s `sync` does all of this.\n\n`contract.deleted` (event and webhook) is now also sent to the scope a contract leaves when it moves to another organisation (or a personal contract to another owner), before its `contract.updated` in the new scope: until now a copy of the old scope kept it.',
  },
  {
    date: '2026-12-04',
    anchor: 'event-list',
    kind: 'added',
    title: 'The event list: GET /api/v1/events and GET /api/v1/events/{id}',
    body:
      'Every change of a contract the key may access, oldest first, whether or not a webhook endpoint exists: `contract.created`, `contract.updated` (with `changed_fields`), `contract.extraction_completed` and `contract.deleted` (its `id` and `organization_id`), each with the same `id` and `data` as its webhook, and `contracts.reset` (no `data.contract`) when the contracts were emptied at once (a `TRUNCATE`), after which a copy starts again from an export (the `webhook-id` header), so a receiver can fetch one it missed with `GET /api/v1/events/{id}`. Page with `cursor` (`pagination.next_cursor`, and `Link: <…>; rel="next"` while `has_more`); at the end of the list `next_cursor` names the same place, so a poller keeps it and asks again later. The order is the order in which the writes committed: a reader that resumes from its cursor never skips an event that committed after it passed, nor sees one twice. `types` keeps some types; `since` starts at an instant instead of a cursor. Events are kept `EVENTS_RETENTION_DAYS` (30 days by default); a cursor or `since` older than that answers `410` with the new error code `cursor_expired`. `limit` 1 to 100 (default 50); rate limited, restricted (`contracts:read`) and cached (`ETag`, `304`) as the list.',
  },
  {
    date: '2026-12-03',
    anchor: 'calendar-notice-deadlines',
    kind: 'added',
    title: 'Calendar feed: notice deadlines with a reminder, renewals at the next term',
    body:
      'The calendar feed has an all-day event per notice deadline ("Give notice by: TITLE", UID `<contract id>-notice@contract-data-api`), whose description says which renewal the notice stops and the term it would start, with a display reminder (`VALARM`) before it: the days the feed\'s owner chose when creating the feed (on the day, 3, 7, 14, 30 or 60), 14 by default. Renewal events stand at `next_renewal_date`: an auto-renewing contract whose extracted renewal date has passed shows its next term, under the same UID, so calendar apps move the event instead of adding one.',
  },
  {
    date: '2026-12-03',
    anchor: 'notice-deadline-upcoming',
    kind: 'added',
    title: 'Webhook contract.notice_deadline_upcoming; contract.renewal_upcoming on the next renewal',
    body:
      'A new event type, `contract.notice_deadline_upcoming`, fires at the endpoint\'s offsets (the same as for renewals and expirations: default 90, 30 and 7 days) before a contract\'s `notice_deadline`, once per deadline and offset, with the deadline as `date`. `contract.renewal_upcoming` counts down to `next_renewal_date`: an auto-renewing contract whose extracted renewal date has passed fires again before each next term. Existing endpoints keep the events they were created with; an endpoint created under Settings → Webhooks or with `npm run webhook -- create` has the new one by default.',
  },
  {
    date: '2026-12-03',
    anchor: 'notice-filters',
    kind: 'added',
    title: 'Notice deadline and next renewal: filters and sorts',
    body:
      'The list and the export take `notice_within_days` (0 to 3650: the notice deadline between today and today + N days, both included, today in UTC), `notice_before` and `notice_after` (a date, the day itself excluded), and sort by `next_renewal_date`, `-next_renewal_date`, `notice_deadline` and `-notice_deadline` (nulls last, like the other dates; ties by id). As every filter on extracted data, they match completed contracts only; cursors, `total` and ETags behave as for the other sorts. `sort=renewal_date` still orders by the extracted renewal date.',
  },
  {
    date: '2026-12-03',
    anchor: 'renewing-next-renewal',
    kind: 'fixed',
    title: 'renewing_within_days, renews_before and renews_after read the next renewal',
    body:
      'The renewal filters read `next_renewal_date`: an auto-renewing contract whose extracted `renewal_date` has passed is matched on the renewal it will actually have next (its renewal date rolled forward by whole terms), where it used to drop out of every upcoming window while it went on renewing. A contract that does not renew automatically, or states no term, is matched on its `renewal_date` as before.',
  },
  {
    date: '2026-12-03',
    anchor: 'renewal-decisions',
    kind: 'added',
    title: 'Renewal decisions: notice period, renewal term, next renewal and notice deadline',
    body:
      'The extracted data (`data` of a contract, the webhooks\' `data.contract`, the export\'s columns after `renewal_date`) has four new nullable fields: `notice_period` and `renewal_term` (ISO 8601 durations of years, months, weeks and days, as extracted: `P90D`, `P3M`, `P1Y`), and, computed on the UTC date of the request, `next_renewal_date` (an auto-renewing contract whose `renewal_date` has passed rolls forward by whole terms, each counted from the contract\'s own day) and `notice_deadline` (`next_renewal_date − notice_period`, the last day notice stops that renewal; null unless the contract renews automatically and states a notice period). Years and months apply first, clamped to the month\'s last day, then weeks and days, as Postgres does. `contract.updated` lists `data.notice_period` and `data.renewal_term` among its `changed_fields`. Clients that read CSV columns by position see four more after `renewal_date`; `columns` picks the old set.',
  },
  {
    date: '2026-11-27',
    anchor: 'key-roll',
    kind: 'added',
    title: 'Rolling a key',
    body:
      'A key can be rolled (Settings → API Keys, or `npm run apikey -- roll`): a new secret for the same key, with the same id, restrictions and rate-limit buckets. The previous secret keeps working until the end of the grace its owner chose (0 to 168 hours), then gets `401` like a revoked key.',
  },
  {
    date: '2026-11-27',
    anchor: 'restricted-keys',
    kind: 'added',
    title: 'Restricted keys: access, permissions, allowed addresses, organisation keys',
    body:
      'A key can be limited to part of its owner\'s access (their personal contracts and some of their organisations), to the permissions `contracts:read` (list, get one) and `contracts:export` (the export), and to up to 20 allowed addresses or CIDR ranges; an organisation\'s owners and admins can create keys owned by the organisation, which read that organisation only. Keys made before keep everything they had.\n\n' +
      'New answers for restricted keys only: `403` with code `insufficient_scope` (the key lacks the operation\'s permission; with `WWW-Authenticate: Bearer error="insufficient_scope", scope="…"`) and `403` with code `ip_not_allowed` (the request came from an address the key does not allow). Each operation names the permission it needs in its `security` requirement and in `x-required-permission`. Contracts outside a key\'s access answer as other people\'s do (left out, `404`, `403 forbidden`).',
  },
  {
    date: '2026-11-25',
    anchor: 'total-exact',
    kind: 'changed',
    title: '`pagination.total_exact`, and `total` with `q` counted up to 1,000',
    body:
      'New field `pagination.total_exact`. With `q` (text search), `pagination.total` counts at most 1,000 matches: when more match, `total` is `1000` and `total_exact` is `false` (read it as "at least 1,000"). Every other total stays exact and `total_exact` is `true`. Under the change policy written since, this change of what `total` means with `q` would count as breaking.',
  },
  {
    date: '2026-11-25',
    anchor: 'request-timeout',
    kind: 'added',
    title: 'Export: `408 request_timeout` for a body that does not arrive in time',
    body:
      'An export request body still arriving after the request deadline (8 seconds unless configured otherwise) is answered `408` with the new error code `request_timeout` (it was a `503`). The export quota is now spent only once the body is valid: a `400` or `408` costs none of it.',
  },
  {
    date: '2026-11-25',
    anchor: 'csv-formulas-after-whitespace',
    kind: 'fixed',
    title: 'CSV: formulas after leading whitespace are neutralised',
    body:
      'A text cell whose first character that is not whitespace is `=`, `+`, `-` or `@` (`  =1+1`, or a line break then `@SUM(A1)`) now gets the leading apostrophe as well; before, leading spaces, tabs or line breaks hid the formula from the check.',
  },
  {
    date: '2026-11-25',
    anchor: 'export-date-format',
    kind: 'added',
    title: 'Export: `date_format`, and the body\'s media types documented',
    body:
      '`date_format: "excel"` in the export body writes `created_at` and `updated_at` as `YYYY-MM-DD HH:MM:SS` (UTC), which Excel reads as a date and time in every locale; the default `iso` is unchanged. The document now lists `text/plain` and `application/x-www-form-urlencoded` for the export body too: it has always been read as JSON whatever its `Content-Type`.',
  },
  {
    date: '2026-11-25',
    anchor: 'operation-ids',
    kind: 'changed',
    title: 'Operation ids for generated clients; a typed client and code samples',
    body:
      'The document\'s operations are named `listContracts`, `getContract`, `exportContracts`, `getCalendarFeed` and `getOpenApiDocument` (HEAD: the same with `Head`), where it had trpc-to-openapi\'s ids such as `contracts-export`. Nothing changes on the wire; a client generated from the earlier document gets new method names when it is generated again. A TypeScript client generated from the document is in the repository (clients/typescript), and every operation has code samples (`x-codeSamples`).',
  },
  {
    date: '2026-11-25',
    anchor: 'webhooks',
    kind: 'added',
    title: 'Webhooks',
    body:
      'Register an HTTPS endpoint under Settings → Webhooks (or `npm run webhook -- create`) to receive the events `contract.created`, `contract.updated`, `contract.deleted`, `contract.extraction_completed`, `contract.renewal_upcoming` and `contract.expiration_upcoming` (plus `webhook.test` on request), signed as Standard Webhooks (`webhook-id`, `webhook-timestamp`, `webhook-signature`), with the body `{type, timestamp, data: {contract}}` in the get-one shape. They are the document\'s `webhooks`. New event types may be added: ignore the ones you do not know.',
  },
  {
    date: '2026-11-25',
    anchor: 'conditional-requests',
    kind: 'added',
    title: 'Conditional requests: `ETag`, `If-None-Match`, `304`',
    body:
      'List, get-one, the calendar feed and the OpenAPI document carry a weak `ETag`; `If-None-Match` with it answers `304 Not Modified` with no body. A `304` does not count against the key\'s rate limit (conditional requests have a quota of their own, ten times the general one). JSON answers are `Cache-Control: private, no-cache` with `Vary: X-API-Key, Authorization`. The calendar feed also sends `Last-Modified` and answers `If-Modified-Since`.',
  },
  {
    date: '2026-11-25',
    anchor: 'unknown-parameters',
    kind: 'changed',
    title: 'Unknown query parameters are a `400`',
    body:
      'A query parameter an operation does not take (a typo such as `stauts`, a tracking parameter) is a `400 invalid_request` that names it, suggests the parameter probably meant and lists the allowed ones; before, it was ignored, which silently widened the query. This narrows what the API accepts: under the change policy written since, it would count as breaking.',
  },
  {
    date: '2026-11-25',
    anchor: 'bearer-authentication',
    kind: 'added',
    title: '`Authorization: Bearer` and `WWW-Authenticate`',
    body:
      'The API key is accepted as `Authorization: Bearer cdapi_…` as well as in `X-API-Key` (the same keys, limits and errors). Two different keys in one request are a `400`; an `Authorization` header with another scheme is left alone. Every `401` carries `WWW-Authenticate` with a `Bearer` and an `ApiKey` challenge.',
  },
  {
    date: '2026-11-25',
    anchor: 'cursor-pagination',
    kind: 'added',
    title: 'Cursor pagination',
    body:
      'The list takes `cursor` and answers `pagination.next_cursor` (`null` on the last page) and `pagination.has_more`, plus `Link: <…>; rel="next"` when there is a next page. Every page costs the same however deep. `offset` stays; a `cursor` with a non-zero `offset` is a `400`.',
  },
  {
    date: '2026-11-22',
    anchor: 'review-fixes-2026-11-22',
    kind: 'fixed',
    title: 'Timestamps Postgres cannot read, the last calendar day, one-column exports',
    body:
      '`updated_since` with an offset or a fraction the database cannot read is a `400` (it was a `500`). A date of 9999-12-31 no longer breaks a calendar feed. A one-column export writes an empty cell as `""`, so that no row of the file is blank.',
  },
  {
    date: '2026-11-22',
    anchor: 'calendar-feed-quota',
    kind: 'changed',
    title: 'Calendar feed: an hourly quota',
    body: 'Each calendar feed can be read 60 times an hour (configurable); past that it answers `429` with `Retry-After`, so that a leaked address cannot keep the database busy.',
  },
  {
    date: '2026-11-22',
    anchor: 'calendar-feed',
    kind: 'added',
    title: 'Calendar feed',
    body:
      '`GET /api/v1/calendar/{token}.ics`: the renewal and expiration dates of the owner\'s completed contracts as an iCalendar (RFC 5545) subscription, opened by a revocable feed token in the address (created under Settings → Calendar feeds), not by an API key.',
  },
  {
    date: '2026-11-22',
    anchor: 'export-columns-bom',
    kind: 'added',
    title: 'Export: `columns` and `bom`',
    body:
      'The export body takes `columns` (the CSV\'s columns, in this order, each once) and `bom` (`true` starts the file with a UTF-8 byte order mark, for Excel), besides the list\'s filters and `sort`. Unknown body fields stay a `400`.',
  },
  {
    date: '2026-11-22',
    anchor: 'sort',
    kind: 'added',
    title: 'Sort',
    body:
      '`sort` on the list and in the export body: `created_at`, `updated_at`, `expiration_date`, `renewal_date`, `contract_value` or `title`, with a leading `-` for descending. Ties are broken by id; contracts without a value come last. The default stays `-created_at`.',
  },
  {
    date: '2026-11-22',
    anchor: 'updated-since',
    kind: 'added',
    title: '`updated_since` for incremental sync',
    body:
      '`updated_since` (an ISO 8601 instant with a time zone) keeps the contracts updated at or after it, on the list and in the export body: pass the time of the previous sync, minus a minute of margin, with `sort=updated_at`.',
  },
  {
    date: '2026-11-22',
    anchor: 'renewal-filters',
    kind: 'added',
    title: 'Renewal filters and windows',
    body:
      'On the list and in the export body: `expiring_within_days` and `renewing_within_days` (0 to 3650: the date between today and today + N days, both included, today in UTC), `expires_before`, `expires_after`, `renews_before`, `renews_after` (a date, the day itself excluded), `auto_renewal` (`true` or `false`) and `q` (case-insensitive text in the title and the parties). Filters on extracted data match completed contracts only.',
  },
  {
    date: '2026-11-22',
    anchor: 'uppercase-uuids',
    kind: 'changed',
    title: 'Upper-case UUIDs accepted',
    body: 'Contract and organisation ids are accepted in upper case too, and compared in lower case. Only a wider input: nothing that was accepted answers differently.',
  },
  {
    date: '2026-11-22',
    anchor: 'head',
    kind: 'added',
    title: '`HEAD` wherever `GET` is served',
    body: '`HEAD` answers with the status and headers the `GET` would have, without a body, and counts like the `GET`. Every method on a path that does not serve it is a JSON `405` with `Allow`.',
  },
  {
    date: '2026-11-22',
    anchor: 'openapi-document',
    kind: 'added',
    title: 'The OpenAPI document and the reference',
    body:
      '`GET /api/v1/openapi.json` serves this API\'s OpenAPI 3.1 document, public (no key), with `Access-Control-Allow-Origin: *` and five minutes of caching; /docs/api renders it.',
  },
  {
    date: '2026-11-22',
    anchor: 'rate-limit-headers',
    kind: 'added',
    title: 'Rate-limit headers',
    body:
      'Authenticated answers carry `X-RateLimit-Limit`, `X-RateLimit-Remaining` and `X-RateLimit-Reset` (Unix seconds), and the IETF draft\'s `RateLimit-Policy` and `RateLimit`. The specification named only `Retry-After` on a `429`.',
  },
  {
    date: '2026-11-22',
    anchor: 'request-id',
    kind: 'added',
    title: 'The request id',
    body: 'Every answer carries `X-Request-Id`; an error body carries the same value as `request_id`. Quote it to support.',
  },
  {
    date: '2026-11-22',
    anchor: 'error-envelope',
    kind: 'added',
    title: 'The error envelope and codes',
    body:
      'Every answer with a status of 400 or more is JSON: `{"success": false, "error": {"code", "message", "details"}, "request_id"}`, with the codes `invalid_request` (400: a parameter out of range, of the wrong type or given twice, or a malformed export body), `unauthorized` (401), `forbidden` (403), `not_found` (404: a contract that does not exist or that the caller cannot see, and unknown paths), `method_not_allowed` (405, with `Allow`), `rate_limited` (429), `internal_error` (500) and `service_unavailable` (503, with `Retry-After`). The specification left the body and the 400 and 404 open.',
  },
  {
    date: '2026-11-22',
    anchor: 'v1',
    kind: 'release',
    title: 'First release of /api/v1',
    body:
      'The specification\'s API: `GET /api/v1/contracts` (filters `status` and `organization_id`, `limit` 1 to 100, default 50, and `offset`), `GET /api/v1/contracts/{id}` and `POST /api/v1/contracts/export` (CSV), with the `X-API-Key` header, the `{success, data}` envelope, and rate limits of 60 requests a minute and 10 exports an hour per key. The entries above it are what was added since.',
  },
];

const VERSION_STEP: Record<ChangeKind, 'minor' | 'patch' | 'start'> = {
  release: 'start',
  added: 'minor',
  changed: 'minor',
  deprecated: 'minor',
  removed: 'minor',
  fixed: 'patch',
};

/** The version each entry brought, oldest entry 1.0.0 (entries newest first, as CHANGELOG). */
export function versionsOf(entries: readonly ChangelogEntry[]): string[] {
  let minor = 0;
  let patch = 0;
  const oldestFirst = [...entries].reverse().map((entry, i) => {
    const step = VERSION_STEP[entry.kind];
    if (i === 0 !== (step === 'start')) throw new Error(`changelog: the oldest entry, and only it, is the release (${entry.anchor})`);
    if (step === 'minor') [minor, patch] = [minor + 1, 0];
    if (step === 'patch') patch += 1;
    return `1.${minor}.${patch}`;
  });
  return oldestFirst.reverse();
}

/** The API's version: the newest entry's (the OpenAPI document's `info.version`). */
export function changelogVersion(entries: readonly ChangelogEntry[] = CHANGELOG): string {
  return versionsOf(entries)[0]!;
}

/** Where an entry is shown on the deployment (the deprecation `Link` headers point here). */
export const CHANGELOG_PAGE_PATH = '/docs/changelog';
export const changelogPageUrl = (origin: string): string => `${origin}${CHANGELOG_PAGE_PATH}`;
export const changelogUrl = (origin: string, anchor: string): string => `${changelogPageUrl(origin)}#${anchor}`;
