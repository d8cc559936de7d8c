import { sql } from 'drizzle-orm';
import {
  boolean,
  char,
  check,
  customType,
  date,
  bigint,
  index,
  integer,
  uniqueIndex,
  jsonb,
  numeric,
  pgEnum,
  pgTable,
  primaryKey,
  real,
  smallint,
  text,
  timestamp,
  uuid,
  varchar,
} from 'drizzle-orm/pg-core';
// Relative, not '@/lib': drizzle-kit loads this file without the app's path aliases.
import { CONTRACT_STATUSES } from '../lib/contracts';

/** A transaction id (Postgres's xid8, as pg_current_xact_id() gives it), read as text. */
const xid8 = customType<{ data: string }>({ dataType: () => 'xid8' });

const timestamps = {
  createdAt: timestamp('created_at', { withTimezone: true, precision: 3 }).notNull().defaultNow(),
};

export const users = pgTable('users', {
  id: uuid('id').primaryKey().defaultRandom(),
  email: varchar('email', { length: 320 }).notNull().unique(),
  name: varchar('name', { length: 120 }),
  // bcrypt hash; null for accounts that only sign in through OAuth.
  passwordHash: text('password_hash'),
  // Carried in every session cookie and compared on each use (server/auth/session-version.ts):
  // sign-out and "sign out everywhere" raise it, so every earlier cookie stops working.
  sessionVersion: integer('session_version').notNull().default(0),
  // When the owner proved the address is theirs; null: not yet, and API keys, calendar feeds
  // and webhook endpoints are refused (server/auth/verification.ts). Only the password
  // sign-up writes null (db/queries/accounts.ts): every other way in is verified already
  // (GitHub's verified primary address, the seeds, accounts from before migration 0011).
  emailVerifiedAt: timestamp('email_verified_at', { withTimezone: true, precision: 3 }).defaultNow(),
  ...timestamps,
});

// Accounts at an OAuth provider, linked to a user when that user first signs in with
// them. Sign-in looks the provider's account id up here, never the e-mail address: an
// address at GitHub proves nothing about who owns the account with that address here.
export const oauthAccounts = pgTable(
  'oauth_accounts',
  {
    provider: varchar('provider', { length: 32 }).notNull(),
    providerAccountId: varchar('provider_account_id', { length: 255 }).notNull(),
    userId: uuid('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    ...timestamps,
  },
  (t) => [primaryKey({ columns: [t.provider, t.providerAccountId] }), index('oauth_accounts_user_idx').on(t.userId)],
);

export const organizations = pgTable('organizations', {
  id: uuid('id').primaryKey().defaultRandom(),
  name: varchar('name', { length: 200 }).notNull(),
  // "Members' personal keys may read this organisation's contracts" (docs/keys.md): off,
  // only the organisation's own keys read them; members' personal API keys, calendar
  // feeds and webhook endpoints leave them out. Read at request time with the scope.
  memberKeysAllowed: boolean('member_keys_allowed').notNull().default(true),
  ...timestamps,
});

export const membershipRole = pgEnum('membership_role', ['owner', 'admin', 'member']);

export const memberships = pgTable(
  'memberships',
  {
    userId: uuid('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    organizationId: uuid('organization_id')
      .notNull()
      .references(() => organizations.id, { onDelete: 'cascade' }),
    role: membershipRole('role').notNull().default('member'),
    ...timestamps,
  },
  (t) => [
    // The primary key (user, organisation) serves "which organisations is this caller in",
    // asked on every API request.
    primaryKey({ columns: [t.userId, t.organizationId] }),
    index('memberships_organization_idx').on(t.organizationId),
  ],
);

export const contractStatus = pgEnum('contract_status', CONTRACT_STATUSES);

export const contracts = pgTable(
  'contracts',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    ownerId: uuid('owner_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    // null: a personal contract of owner_id; set: the organisation's contract.
    organizationId: uuid('organization_id').references(() => organizations.id, {
      onDelete: 'cascade',
    }),
    title: varchar('title', { length: 500 }).notNull(),
    status: contractStatus('status').notNull().default('pending'),
    fileName: varchar('file_name', { length: 500 }).notNull(),
    fileSize: integer('file_size').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true, precision: 3 }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true, precision: 3 }).notNull().defaultNow(),
    // Extracted data: every field nullable, because extraction may not find it.
    expirationDate: date('expiration_date', { mode: 'string' }),
    renewalDate: date('renewal_date', { mode: 'string' }),
    autoRenewal: boolean('auto_renewal'),
    // ISO 8601 durations (P30D, P8W, P3M, P1Y: lib/renewal-dates.ts): how long before a
    // renewal notice must be given to stop it, and how long each automatic renewal runs.
    // Kept as written; the CHECK constraints below refuse any other text.
    noticePeriod: text('notice_period'),
    renewalTerm: text('renewal_term'),
    // The renewal decision (lib/renewal-dates.ts) as of the day the row was last written or
    // rolled forward (migration 0019: a trigger sets both on every write, the scheduled job
    // rolls evergreen contracts whose next renewal has passed). Stored so that the list can
    // filter and sort by them through an index; a row the job has not rolled yet is read
    // through the SQL functions instead (db/queries/contracts/expressions.ts, isStale), so
    // an answer never depends on when the job last ran.
    nextRenewalDate: date('next_renewal_date', { mode: 'string' }),
    noticeDeadline: date('notice_deadline', { mode: 'string' }),
    contractValue: numeric('contract_value', { precision: 16, scale: 2, mode: 'number' }),
    currency: char('currency', { length: 3 }),
    provider: varchar('provider', { length: 300 }),
    client: varchar('client', { length: 300 }),
    summary: text('summary'),
    confidenceScore: real('confidence_score'),
    // What q searches (db/queries/contracts/filters.ts): the title, then the parties once
    // extracted, one per line, lower-cased once when the row is written. `ILIKE` over the
    // same text lower-cased both sides on every row it tested (about 0.5 µs a row here, 0.05
    // for `LIKE` on the stored text), and a search that has to pass many rows (q with
    // sort=title, q with a status or a date window) paid it on each (docs/query-plans.md).
    searchText: text('search_text').generatedAlwaysAs(
      sql`lower(title || E'\\n' || CASE WHEN status = 'completed' THEN coalesce(provider, '') || E'\\n' || coalesce(client, '') ELSE '' END)`,
    ),
  },
  (t) => [
    check('contracts_confidence_score_range', sql`${t.confidenceScore} BETWEEN 0 AND 1`),
    check('contracts_currency_format', sql`${t.currency} ~ '^[A-Z]{3}$'`),
    // The pattern of lib/renewal-dates.ts (DURATION_PATTERN): date designators in order, at
    // least one, four digits at most each; a term has a length (not P0D).
    check('contracts_notice_period_iso8601', sql`${t.noticePeriod} ~ '^P(?!$)([0-9]{1,4}Y)?([0-9]{1,4}M)?([0-9]{1,4}W)?([0-9]{1,4}D)?$'`),
    check(
      'contracts_renewal_term_iso8601',
      sql`${t.renewalTerm} ~ '^P(?!$)([0-9]{1,4}Y)?([0-9]{1,4}M)?([0-9]{1,4}W)?([0-9]{1,4}D)?$' AND ${t.renewalTerm} !~ '^P(0+[YMWD])+$'`,
    ),
    check('contracts_file_size_nonnegative', sql`${t.fileSize} >= 0`),
    // "Contracts the caller may see, newest first" is a union of two access paths, each
    // served in list order by its own index: personal contracts of one owner, and the
    // contracts of one organisation. Postgres merges the branches in index order, so a
    // page reads about limit + offset rows whatever the caller can see.
    index('contracts_personal_list_idx')
      .on(t.ownerId, t.createdAt.desc().nullsFirst(), t.id.desc().nullsFirst())
      .where(sql`${t.organizationId} IS NULL`),
    index('contracts_organization_list_idx').on(t.organizationId, t.createdAt.desc().nullsFirst(), t.id.desc().nullsFirst()),
    // The total of a list is counted from these narrow indexes, index-only: B-tree
    // deduplication stores a path's entries (one owner, or one organisation, and a status)
    // as posting lists, so counting 40,000 contracts reads about 50 pages instead of the
    // 500 of the list indexes, and a status filter narrows the scan.
    index('contracts_personal_status_idx').on(t.ownerId, t.status).where(sql`${t.organizationId} IS NULL`),
    index('contracts_organization_status_idx').on(t.organizationId, t.status),
    // Incremental sync (updated_since, sort=updated_at) walks these in either direction.
    index('contracts_personal_updated_idx')
      .on(t.ownerId, t.updatedAt, t.id)
      .where(sql`${t.organizationId} IS NULL`),
    index('contracts_organization_updated_idx').on(t.organizationId, t.updatedAt, t.id),
    // Renewal questions ("what expires in the next 90 days, soonest first") read the dates
    // the API shows, which exist only for completed contracts: the indexes hold exactly
    // that expression (db/queries/contracts/expressions.ts builds the same one), ascending
    // with nulls last, the order of sort=expiration_date and sort=renewal_date.
    //
    // In the database (migration 0012) these four also carry INCLUDE (status,
    // expiration_date, renewal_date, auto_renewal; the expiration pair, since 0019, every
    // date and renewal_term, as the indexes below): a date window sorted by the OTHER date
    // reads its range index-only (db/queries/contracts/plan.ts, WINDOW_FEW_MATCHES; Postgres
    // uses an index-only scan for an expression only when its columns are in the index).
    // Drizzle cannot write INCLUDE, so the migration is written by hand and the key columns
    // here are the whole of what Drizzle compares. Not key columns: as key columns the
    // planner used auto_renewal as an index condition of the window and read a window's
    // rows and sorted them where walking the list's index was 100 times cheaper
    // (`expiring_within_days=90&auto_renewal=true`: 0.7 ms walking, 76 ms so).
    index('contracts_personal_expiration_idx')
      .on(t.ownerId, sql`(CASE WHEN status = 'completed' THEN expiration_date END)`, t.id)
      .where(sql`${t.organizationId} IS NULL`),
    index('contracts_organization_expiration_idx').on(
      t.organizationId,
      sql`(CASE WHEN status = 'completed' THEN expiration_date END)`,
      t.id,
    ),
    index('contracts_personal_renewal_idx')
      .on(t.ownerId, sql`(CASE WHEN status = 'completed' THEN renewal_date END)`, t.id)
      .where(sql`${t.organizationId} IS NULL`),
    index('contracts_organization_renewal_idx').on(
      t.organizationId,
      sql`(CASE WHEN status = 'completed' THEN renewal_date END)`,
      t.id,
    ),
    // The other direction of the date sorts (sort=-expiration_date, -renewal_date): nulls
    // still last, so a backward scan of the ascending index cannot serve it.
    index('contracts_personal_expiration_desc_idx')
      .on(t.ownerId, sql`(CASE WHEN status = 'completed' THEN expiration_date END) DESC NULLS LAST`, t.id.desc().nullsFirst())
      .where(sql`${t.organizationId} IS NULL`),
    index('contracts_organization_expiration_desc_idx').on(
      t.organizationId,
      sql`(CASE WHEN status = 'completed' THEN expiration_date END) DESC NULLS LAST`,
      t.id.desc().nullsFirst(),
    ),
    index('contracts_personal_renewal_desc_idx')
      .on(t.ownerId, sql`(CASE WHEN status = 'completed' THEN renewal_date END) DESC NULLS LAST`, t.id.desc().nullsFirst())
      .where(sql`${t.organizationId} IS NULL`),
    index('contracts_organization_renewal_desc_idx').on(
      t.organizationId,
      sql`(CASE WHEN status = 'completed' THEN renewal_date END) DESC NULLS LAST`,
      t.id.desc().nullsFirst(),
    ),
    // The renewal decision's dates (migration 0019): renewing_* and notice_* windows and
    // sort=next_renewal_date / notice_deadline, as the expiration's indexes; the ascending
    // ones carry INCLUDE columns in the database (written by hand, as 0012's) so that a
    // window is read index-only, freshness test included.
    index('contracts_personal_next_renewal_idx')
      .on(t.ownerId, sql`(CASE WHEN status = 'completed' THEN next_renewal_date END)`, t.id)
      .where(sql`${t.organizationId} IS NULL`),
    index('contracts_organization_next_renewal_idx').on(t.organizationId, sql`(CASE WHEN status = 'completed' THEN next_renewal_date END)`, t.id),
    index('contracts_personal_next_renewal_desc_idx')
      .on(t.ownerId, sql`(CASE WHEN status = 'completed' THEN next_renewal_date END) DESC NULLS LAST`, t.id.desc().nullsFirst())
      .where(sql`${t.organizationId} IS NULL`),
    index('contracts_organization_next_renewal_desc_idx').on(
      t.organizationId,
      sql`(CASE WHEN status = 'completed' THEN next_renewal_date END) DESC NULLS LAST`,
      t.id.desc().nullsFirst(),
    ),
    index('contracts_personal_notice_idx')
      .on(t.ownerId, sql`(CASE WHEN status = 'completed' THEN notice_deadline END)`, t.id)
      .where(sql`${t.organizationId} IS NULL`),
    index('contracts_organization_notice_idx').on(t.organizationId, sql`(CASE WHEN status = 'completed' THEN notice_deadline END)`, t.id),
    index('contracts_personal_notice_desc_idx')
      .on(t.ownerId, sql`(CASE WHEN status = 'completed' THEN notice_deadline END) DESC NULLS LAST`, t.id.desc().nullsFirst())
      .where(sql`${t.organizationId} IS NULL`),
    index('contracts_organization_notice_desc_idx').on(
      t.organizationId,
      sql`(CASE WHEN status = 'completed' THEN notice_deadline END) DESC NULLS LAST`,
      t.id.desc().nullsFirst(),
    ),
    // The evergreen contracts of a path by stored next renewal: those before today are the
    // ones the job has not rolled yet (the list's stale branch reads that range, a day's
    // renewals at most when the job runs; db/queries/contracts/expressions.ts, isStale).
    index('contracts_personal_rolling_idx')
      .on(t.ownerId, t.nextRenewalDate)
      .where(sql`${t.organizationId} IS NULL AND ${t.status} = 'completed' AND ${t.autoRenewal} AND ${t.renewalTerm} IS NOT NULL`),
    index('contracts_organization_rolling_idx')
      .on(t.organizationId, t.nextRenewalDate)
      .where(sql`${t.organizationId} IS NOT NULL AND ${t.status} = 'completed' AND ${t.autoRenewal} AND ${t.renewalTerm} IS NOT NULL`),
    // The same for the scheduled job, across every path (server/contracts/rolling.ts): without
    // it, finding nothing to roll read the whole of the two above (380 ms at 2M).
    index('contracts_rolling_idx')
      .on(t.nextRenewalDate)
      .where(sql`${t.status} = 'completed' AND ${t.autoRenewal} AND ${t.renewalTerm} IS NOT NULL`),
    // sort=contract_value, both directions with nulls last, and sort=title (lower(title),
    // not nullable: one index walked either way). Without them a page sorted every row the
    // caller sees (0.6 to 0.9 s at 2,000,000 contracts for a caller who sees 500,000).
    index('contracts_personal_value_idx')
      .on(t.ownerId, sql`(CASE WHEN status = 'completed' THEN contract_value END)`, t.id)
      .where(sql`${t.organizationId} IS NULL`),
    index('contracts_organization_value_idx').on(t.organizationId, sql`(CASE WHEN status = 'completed' THEN contract_value END)`, t.id),
    index('contracts_personal_value_desc_idx')
      .on(t.ownerId, sql`(CASE WHEN status = 'completed' THEN contract_value END) DESC NULLS LAST`, t.id.desc().nullsFirst())
      .where(sql`${t.organizationId} IS NULL`),
    index('contracts_organization_value_desc_idx').on(
      t.organizationId,
      sql`(CASE WHEN status = 'completed' THEN contract_value END) DESC NULLS LAST`,
      t.id.desc().nullsFirst(),
    ),
    index('contracts_personal_title_idx').on(t.ownerId, sql`lower(title)`, t.id).where(sql`${t.organizationId} IS NULL`),
    index('contracts_organization_title_idx').on(t.organizationId, sql`lower(title)`, t.id),
    // q with a status other than completed: a path's contracts of that status in list
    // order. In the database (migration 0017) they also carry INCLUDE (search_text), so the
    // word is tested on the index's entries, index-only: such a contract's search text is
    // its title alone (0015), short enough for a B-tree entry, where a completed one's
    // parties are not. Without them a word in none of those titles was tested on every
    // such contract of the caller from the heap, or intersected with the table-wide trigram
    // bitmap of the word (`q=initech&status=processing`: 408 to 540 ms at 2M).
    // filters.ts adds the clause `status <> 'completed'` that lets Postgres use them.
    // Drizzle cannot write INCLUDE: the migration is written by hand, as 0012's.
    index('contracts_personal_not_completed_idx')
      .on(t.ownerId, t.status, t.createdAt.desc().nullsFirst(), t.id.desc().nullsFirst())
      .where(sql`${t.organizationId} IS NULL AND ${t.status} <> 'completed'`),
    index('contracts_organization_not_completed_idx')
      .on(t.organizationId, t.status, t.createdAt.desc().nullsFirst(), t.id.desc().nullsFirst())
      .where(sql`${t.organizationId} IS NOT NULL AND ${t.status} <> 'completed'`),
    // q: substring search in the title and, once extracted, the parties (pg_trgm).
    index('contracts_search_idx').using('gin', sql`${t.searchText} gin_trgm_ops`),
  ],
);

/**
 * Exact totals without counting rows: how many contracts each access path (a user's
 * personal contracts, or one organisation's) holds per status and auto_renewal value
 * (0 false, 1 true, 2 null). Statement-level triggers on contracts keep it in the writer's
 * own transaction (migration 0007), so a count is as transactional as the rows. A total
 * with no filter, a status, an organisation or auto_renewal sums a dozen rows per path.
 */
export const contractCounts = pgTable(
  'contract_counts',
  {
    // true: scope_id is the owner of personal contracts; false: it is an organisation.
    personal: boolean('personal').notNull(),
    scopeId: uuid('scope_id').notNull(),
    status: contractStatus('status').notNull(),
    autoRenewal: smallint('auto_renewal').notNull(),
    n: bigint('n', { mode: 'number' }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.scopeId, t.personal, t.status, t.autoRenewal] })],
);

/**
 * The same per day of the expiration date, the next renewal and the notice deadline the API
 * shows (completed contracts only; the stored next_renewal_date and notice_deadline since
 * migration 0019): the total of "expiring within 90 days" sums at most 91 days per path and
 * auto_renewal value instead of counting thousands of index entries.
 */
export const contractDateCounts = pgTable(
  'contract_date_counts',
  {
    personal: boolean('personal').notNull(),
    scopeId: uuid('scope_id').notNull(),
    kind: char('kind', { length: 1 }).notNull(), // 'e' expiration, 'r' next renewal, 'n' notice deadline
    day: date('day', { mode: 'string' }).notNull(),
    autoRenewal: smallint('auto_renewal').notNull(),
    n: bigint('n', { mode: 'number' }).notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.scopeId, t.personal, t.kind, t.day, t.autoRenewal] }),
    check('contract_date_counts_kind', sql`${t.kind} IN ('e', 'r', 'n')`),
  ],
);

/**
 * How many contracts of each access path, status and auto_renewal (0 false, 1 true, 2
 * null, as in contract_counts) were last updated on each day (updated_at's UTC day): the
 * total of updated_since, alone or with a status or auto_renewal, is the index count of
 * the rows in the rest of since's own day plus the sum of the days after it (migrations
 * 0008, 0009), instead of counting every row updated since. Statement-level triggers keep
 * it like contract_counts: an update that moves updated_at to another day, or changes the
 * status or auto_renewal, moves one from the old key's row to the new key's.
 */
export const contractUpdatedCounts = pgTable(
  'contract_updated_counts',
  {
    personal: boolean('personal').notNull(),
    scopeId: uuid('scope_id').notNull(),
    day: date('day', { mode: 'string' }).notNull(),
    status: contractStatus('status').notNull(),
    autoRenewal: smallint('auto_renewal').notNull(),
    n: bigint('n', { mode: 'number' }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.scopeId, t.personal, t.day, t.status, t.autoRenewal] })],
);

// api_key and calendar_feed are created by users in Settings; email_verification and
// password_reset are the single-use links the app e-mails (server/access/link-tokens.ts).
export const tokenKind = pgEnum('token_kind', ['api_key', 'calendar_feed', 'email_verification', 'password_reset']);

// The secret tokens users create in Settings: API keys, and calendar feed tokens (calendar
// apps cannot send headers, so a feed is read with a token in its URL). One table, one
// lifecycle (server/access/tokens.ts): shown once, stored as the SHA-256 of the token,
// listed by a non-secret hint, revoked or expired, never deleted.
//
// A token is owned by a person (user_id) or, for API keys, by an organisation
// (organization_id): an organisation key keeps working when the person who created it
// (created_by) leaves or is deleted. What it may read (access_*), do (permissions) and
// from where (allowed_addresses) are read with the scope on every request
// (db/queries/token-scope.ts), so an edit takes effect on the next request everywhere.
export const accessTokens = pgTable(
  'access_tokens',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    // The person who owns the token; null for an organisation's key.
    userId: uuid('user_id').references(() => users.id, { onDelete: 'cascade' }),
    // The organisation that owns the key (API keys only); null for a person's token.
    organizationId: uuid('organization_id').references(() => organizations.id, { onDelete: 'cascade' }),
    // Who created it; null once that person is deleted (an organisation key survives them).
    createdBy: uuid('created_by').references(() => users.id, { onDelete: 'set null' }),
    kind: tokenKind('kind').notNull(),
    name: varchar('name', { length: 64 }).notNull(),
    // SHA-256 of the full token, hex. The token itself is never stored.
    tokenHash: char('token_hash', { length: 64 }).notNull().unique(),
    // Non-secret hint shown in the list: the prefix and the last four characters.
    hint: varchar('hint', { length: 32 }).notNull(),
    // Access: everything the owner can see (true, the default and every key made before
    // restrictions), or the chosen set: personal contracts and these organisations.
    accessAll: boolean('access_all').notNull().default(true),
    accessPersonal: boolean('access_personal').notNull().default(false),
    accessOrganizationIds: jsonb('access_organization_ids').$type<string[]>().notNull().default(sql`'[]'::jsonb`),
    // API keys: the permissions (lib/key-restrictions.ts) and the allowed addresses
    // (IPv4/IPv6 addresses and CIDR ranges; empty: any address).
    permissions: jsonb('permissions').$type<string[]>().notNull().default(sql`'["contracts:read","contracts:export"]'::jsonb`),
    allowedAddresses: jsonb('allowed_addresses').$type<string[]>().notNull().default(sql`'[]'::jsonb`),
    // After a roll, the previous secret keeps working until previous_expires_at.
    previousTokenHash: char('previous_token_hash', { length: 64 }).unique(),
    previousExpiresAt: timestamp('previous_expires_at', { withTimezone: true, precision: 3 }),
    createdAt: timestamp('created_at', { withTimezone: true, precision: 3 }).notNull().defaultNow(),
    lastUsedAt: timestamp('last_used_at', { withTimezone: true, precision: 3 }),
    expiresAt: timestamp('expires_at', { withTimezone: true, precision: 3 }),
    revokedAt: timestamp('revoked_at', { withTimezone: true, precision: 3 }),
    // Calendar feeds: how many days before a notice deadline its event's reminder shows
    // (lib/calendar.ts; null: the default, for feeds made before the choice existed).
    noticeReminderDays: smallint('notice_reminder_days'),
  },
  (t) => [
    index('access_tokens_user_idx').on(t.userId, t.kind, t.createdAt.desc()),
    index('access_tokens_organization_idx').on(t.organizationId, t.createdAt.desc()).where(sql`${t.organizationId} IS NOT NULL`),
    check('access_tokens_one_owner', sql`(${t.userId} IS NULL) <> (${t.organizationId} IS NULL)`),
    check('access_tokens_organization_keys', sql`${t.organizationId} IS NULL OR ${t.kind} = 'api_key'`),
    check('access_tokens_notice_reminder_days', sql`${t.noticeReminderDays} IS NULL OR (${t.kind} = 'calendar_feed' AND ${t.noticeReminderDays} BETWEEN 0 AND 60)`),
  ],
);

// "Remove access" (an organisation's owners and admins): this member's personal key no
// longer reads this organisation's contracts; nothing else of the key changes, and its
// owner sees who removed it and when.
export const tokenOrganizationRemovals = pgTable(
  'token_organization_removals',
  {
    tokenId: uuid('token_id')
      .notNull()
      .references(() => accessTokens.id, { onDelete: 'cascade' }),
    organizationId: uuid('organization_id')
      .notNull()
      .references(() => organizations.id, { onDelete: 'cascade' }),
    removedBy: uuid('removed_by').references(() => users.id, { onDelete: 'set null' }),
    removedAt: timestamp('removed_at', { withTimezone: true, precision: 3 }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.tokenId, t.organizationId] }), index('token_organization_removals_organization_idx').on(t.organizationId)],
);

// Webhooks (server/webhooks/): endpoints users register, the outbox of contract events that
// a trigger on contracts fills in the writer's own transaction (migration 0004), one
// delivery per event and endpoint, and every attempt to deliver it.

export const webhookEndpointStatus = pgEnum('webhook_endpoint_status', ['active', 'paused', 'disabled']);

export const webhookEndpoints = pgTable(
  'webhook_endpoints',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    userId: uuid('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    url: varchar('url', { length: 2048 }).notNull(),
    // Event types the endpoint subscribed to, and the days before a renewal or expiration
    // date at which the *_upcoming events fire (JSON arrays: no array parameters, see
    // db/queries/access.ts on postgres.js behind a pooler).
    eventTypes: jsonb('event_types').$type<string[]>().notNull(),
    renewalOffsets: jsonb('renewal_offsets').$type<number[]>().notNull(),
    status: webhookEndpointStatus('status').notNull().default('active'),
    // Which contracts it hears of, as for tokens: everything the owner can see, or the
    // chosen set (personal contracts, these organisations).
    accessAll: boolean('access_all').notNull().default(true),
    accessPersonal: boolean('access_personal').notNull().default(false),
    accessOrganizationIds: jsonb('access_organization_ids').$type<string[]>().notNull().default(sql`'[]'::jsonb`),
    // The signing secret (whsec_…), AES-256-GCM encrypted (server/access/secret-box.ts): it
    // must be recoverable to sign, and a database dump alone must not forge deliveries.
    secretCiphertext: text('secret_ciphertext').notNull(),
    secretHint: varchar('secret_hint', { length: 32 }).notNull(),
    // After a rotation the previous secret signs too, until it expires (24 hours).
    previousSecretCiphertext: text('previous_secret_ciphertext'),
    previousSecretExpiresAt: timestamp('previous_secret_expires_at', { withTimezone: true, precision: 3 }),
    // Start of the current run of failed attempts (null after a success); five days of it disable the endpoint.
    failingSince: timestamp('failing_since', { withTimezone: true, precision: 3 }),
    disabledReason: text('disabled_reason'),
    createdAt: timestamp('created_at', { withTimezone: true, precision: 3 }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true, precision: 3 }).notNull().defaultNow(),
  },
  (t) => [index('webhook_endpoints_user_idx').on(t.userId, t.createdAt)],
);

// The outbox. `seq` orders events; rows are written by the contracts trigger (created,
// updated, deleted, extraction_completed) or by the app for one endpoint (`endpoint_id`:
// the *_upcoming events at that endpoint's offsets, test events).
export const webhookEvents = pgTable(
  'webhook_events',
  {
    seq: bigint('seq', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    id: uuid('id').notNull().unique().defaultRandom(),
    type: varchar('type', { length: 64 }).notNull(),
    // No foreign keys: a deleted contract's events outlive it.
    contractId: uuid('contract_id'),
    ownerId: uuid('owner_id'),
    organizationId: uuid('organization_id'),
    // The contract row as the event saw it (to_jsonb of the row; for a deletion only id and organization_id).
    contract: jsonb('contract'),
    // Added to the payload's data: changed_fields, or the upcoming date and offset.
    extra: jsonb('extra'),
    endpointId: uuid('endpoint_id').references(() => webhookEndpoints.id, { onDelete: 'cascade' }),
    occurredAt: timestamp('occurred_at', { withTimezone: true, precision: 3 }).notNull().defaultNow(),
    fannedOutAt: timestamp('fanned_out_at', { withTimezone: true, precision: 3 }),
    // The event list's order (migration 0021): given when the writing transaction commits,
    // in commit order, to the events of no endpoint; null until then (and for an
    // endpoint's own events, which are not in the list).
    position: bigint('position', { mode: 'number' }),
    // The writing transaction: its commit gives its events their positions.
    transactionId: xid8('transaction_id').notNull().default(sql`pg_current_xact_id()`),
    // An event of one API key's own list (access.reduced, access.expanded: what the key may
    // see changed, migration 0022); no owner and no organisation then.
    tokenId: uuid('token_id').references(() => accessTokens.id, { onDelete: 'cascade' }),
  },
  (t) => [
    index('webhook_events_pending_idx').on(t.seq).where(sql`${t.fannedOutAt} IS NULL`),
    index('webhook_events_occurred_idx').on(t.occurredAt),
    // The whole list in order (its end, retention's oldest first). Partial on a condition the
    // pages never state, so that the planner cannot take it for a path's page: scanning it
    // for one owner's events after a place skipped the other tenants' events one by one (1.2 s
    // for the heavy caller with 3,000,000 events, measured), where the path's index holds
    // only that owner's.
    uniqueIndex('webhook_events_position_idx').on(t.position).where(sql`${t.endpointId} IS NULL`),
    // A key's events, per access path (as the contracts' indexes: personal, organisation).
    index('webhook_events_personal_position_idx')
      .on(t.ownerId, t.position)
      .where(sql`${t.organizationId} IS NULL AND ${t.position} IS NOT NULL`),
    index('webhook_events_organization_position_idx')
      .on(t.organizationId, t.position)
      .where(sql`${t.organizationId} IS NOT NULL AND ${t.position} IS NOT NULL`),
    // Events about every tenant (contracts.reset: a TRUNCATE of the contracts), few.
    index('webhook_events_everyone_position_idx')
      .on(t.position)
      .where(sql`${t.ownerId} IS NULL AND ${t.organizationId} IS NULL AND ${t.tokenId} IS NULL AND ${t.position} IS NOT NULL`),
    // One key's own events (its access changed), few.
    index('webhook_events_token_position_idx')
      .on(t.tokenId, t.position)
      .where(sql`${t.tokenId} IS NOT NULL`),
    // The events of transactions not committed yet (few), found at their commit.
    index('webhook_events_unpositioned_idx')
      .on(t.transactionId)
      .where(sql`${t.position} IS NULL AND ${t.endpointId} IS NULL`),
  ],
);

/**
 * The transactions that wrote events of the list and have not committed yet: one row each,
 * whose deferred constraint trigger gives those events their positions at commit
 * (migration 0021). Empty between transactions.
 */
export const eventListCommits = pgTable('event_list_commits', {
  transactionId: xid8('transaction_id').primaryKey(),
});

/**
 * How far retention has removed the list (one row): a cursor at or before `pruned_through`,
 * or a `since` at or before `pruned_until`, may have missed removed events (410 cursor_expired).
 */
export const eventListHorizon = pgTable(
  'event_list_horizon',
  {
    singleton: boolean('singleton').primaryKey().default(true),
    prunedThrough: bigint('pruned_through', { mode: 'number' }).notNull().default(0),
    prunedUntil: timestamp('pruned_until', { withTimezone: true, precision: 3 }),
  },
  (t) => [check('event_list_horizon_singleton', sql`${t.singleton}`)],
);

export const webhookDeliveryState = pgEnum('webhook_delivery_state', ['pending', 'succeeded', 'failed', 'skipped']);

// One event for one endpoint: the message, delivered at least once, retried on a schedule.
export const webhookDeliveries = pgTable(
  'webhook_deliveries',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    endpointId: uuid('endpoint_id')
      .notNull()
      .references(() => webhookEndpoints.id, { onDelete: 'cascade' }),
    eventSeq: bigint('event_seq', { mode: 'number' })
      .notNull()
      .references(() => webhookEvents.seq, { onDelete: 'cascade' }),
    // Deliveries of one contract to one endpoint go out in event order (null: no order).
    contractId: uuid('contract_id'),
    state: webhookDeliveryState('state').notNull().default('pending'),
    attempts: integer('attempts').notNull().default(0),
    nextAttemptAt: timestamp('next_attempt_at', { withTimezone: true, precision: 3 }).notNull(),
    // A worker's claim: only the holder of the token records the result; an expired lease
    // (a worker that crashed after claiming) makes the delivery claimable again.
    leaseToken: uuid('lease_token'),
    leaseExpiresAt: timestamp('lease_expires_at', { withTimezone: true, precision: 3 }),
    lastAttemptAt: timestamp('last_attempt_at', { withTimezone: true, precision: 3 }),
    lastStatusCode: integer('last_status_code'),
    lastDurationMs: integer('last_duration_ms'),
    lastResponse: text('last_response'),
    lastError: text('last_error'),
    createdAt: timestamp('created_at', { withTimezone: true, precision: 3 }).notNull().defaultNow(),
  },
  (t) => [
    index('webhook_deliveries_due_idx').on(t.nextAttemptAt).where(sql`${t.state} = 'pending'`),
    index('webhook_deliveries_order_idx').on(t.endpointId, t.contractId, t.eventSeq).where(sql`${t.state} = 'pending'`),
    index('webhook_deliveries_log_idx').on(t.endpointId, t.createdAt.desc(), t.id.desc()),
    index('webhook_deliveries_event_idx').on(t.eventSeq),
  ],
);

// Every attempt, for the per-user figures and the history of a delivery.
export const webhookAttempts = pgTable(
  'webhook_attempts',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    deliveryId: uuid('delivery_id')
      .notNull()
      .references(() => webhookDeliveries.id, { onDelete: 'cascade' }),
    endpointId: uuid('endpoint_id')
      .notNull()
      .references(() => webhookEndpoints.id, { onDelete: 'cascade' }),
    userId: uuid('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    attemptedAt: timestamp('attempted_at', { withTimezone: true, precision: 3 }).notNull(),
    succeeded: boolean('succeeded').notNull(),
    statusCode: integer('status_code'),
    durationMs: integer('duration_ms').notNull(),
    error: text('error'),
  },
  (t) => [
    index('webhook_attempts_delivery_idx').on(t.deliveryId, t.attemptedAt),
    index('webhook_attempts_user_idx').on(t.userId, t.attemptedAt),
  ],
);

// Which *_upcoming events were sent: once per endpoint, contract, kind, date and offset,
// so a moved date fires again and a repeated run never does.
export const webhookUpcomingSent = pgTable(
  'webhook_upcoming_sent',
  {
    endpointId: uuid('endpoint_id')
      .notNull()
      .references(() => webhookEndpoints.id, { onDelete: 'cascade' }),
    contractId: uuid('contract_id').notNull(),
    kind: varchar('kind', { length: 16 }).notNull(),
    date: date('date', { mode: 'string' }).notNull(),
    offsetDays: integer('offset_days').notNull(),
    sentAt: timestamp('sent_at', { withTimezone: true, precision: 3 }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.endpointId, t.contractId, t.kind, t.date, t.offsetDays] })],
);

// What a calendar feed last served, for its Last-Modified: the entity tag of the last
// answer and when it first differed from the one before. A feed changes when a contract
// changes, but also when one is deleted, a membership ends or a date leaves the window,
// none of which leaves a newer updated_at behind; comparing answers catches all of them.
export const calendarFeedVersions = pgTable('calendar_feed_versions', {
  tokenId: uuid('token_id')
    .primaryKey()
    .references(() => accessTokens.id, { onDelete: 'cascade' }),
  etag: varchar('etag', { length: 64 }).notNull(),
  changedAt: timestamp('changed_at', { withTimezone: true, precision: 3 }).notNull(),
});

// The mail outbox (server/mail/): a message is written in the transaction that decides to
// send it and sent by the worker, retried when the SMTP server fails. A sent message's row
// is deleted (its text carries a single-use link); one given up on keeps no body.
export const mailOutbox = pgTable(
  'mail_outbox',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    recipient: varchar('recipient', { length: 320 }).notNull(),
    subject: varchar('subject', { length: 200 }).notNull(),
    text: text('text').notNull(),
    html: text('html').notNull(),
    attempts: integer('attempts').notNull().default(0),
    nextAttemptAt: timestamp('next_attempt_at', { withTimezone: true, precision: 3 }).notNull().defaultNow(),
    leaseToken: uuid('lease_token'),
    leaseExpiresAt: timestamp('lease_expires_at', { withTimezone: true, precision: 3 }),
    lastError: text('last_error'),
    failedAt: timestamp('failed_at', { withTimezone: true, precision: 3 }),
    createdAt: timestamp('created_at', { withTimezone: true, precision: 3 }).notNull().defaultNow(),
  },
  (t) => [index('mail_outbox_due_idx').on(t.nextAttemptAt).where(sql`${t.failedAt} IS NULL`)],
);

// What every key did (server/usage/, server/security-log/; docs/security.md, "What is kept").

// Per-key request counts by hour (kept 48 hours) and by day (kept 90 days), by operation
// (read: list and get-one; export) and outcome (2xx, 304, 4xx, 429, 5xx). Written by each
// instance once a second (one upsert adding its counts) when no Redis is configured;
// with Redis the counts live there instead.
export const keyUsage = pgTable(
  'key_usage',
  {
    tokenId: uuid('token_id')
      .notNull()
      .references(() => accessTokens.id, { onDelete: 'cascade' }),
    // 'hour' or 'day'.
    granularity: varchar('granularity', { length: 4 }).notNull(),
    bucketStart: timestamp('bucket_start', { withTimezone: true, precision: 3 }).notNull(),
    operation: varchar('operation', { length: 8 }).notNull(),
    outcome: varchar('outcome', { length: 4 }).notNull(),
    n: bigint('n', { mode: 'number' }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.tokenId, t.granularity, t.bucketStart, t.operation, t.outcome] })],
);

// The last requests of each key (1,000 per key, kept 7 days by the retention job), written
// in batches after the responses (one multi-row insert a second per instance).
export const requestLog = pgTable(
  'request_log',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    tokenId: uuid('token_id')
      .notNull()
      .references(() => accessTokens.id, { onDelete: 'cascade' }),
    at: timestamp('at', { withTimezone: true, precision: 3 }).notNull(),
    method: varchar('method', { length: 16 }).notNull(),
    // The path with its query; a calendar feed's token masked (never a secret).
    path: varchar('path', { length: 2048 }).notNull(),
    status: smallint('status').notNull(),
    errorCode: varchar('error_code', { length: 64 }),
    durationMs: real('duration_ms').notNull(),
    requestId: varchar('request_id', { length: 64 }).notNull(),
    clientAddress: varchar('client_address', { length: 64 }),
    userAgent: varchar('user_agent', { length: 300 }),
    bytes: bigint('bytes', { mode: 'number' }).notNull(),
  },
  (t) => [index('request_log_token_idx').on(t.tokenId, t.at.desc(), t.id.desc()), index('request_log_request_id_idx').on(t.requestId)],
);

// The security log: append-only (a trigger of migration 0013 refuses UPDATE and DELETE
// unless the retention job's transaction says it is the retention job). No foreign keys:
// an event outlives the user, key or organisation it names.
export const securityEvents = pgTable(
  'security_events',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    at: timestamp('at', { withTimezone: true, precision: 3 }).notNull().defaultNow(),
    kind: varchar('kind', { length: 48 }).notNull(),
    // 'user', 'api_key' or 'system'; the label is what the log shows (an e-mail, "API key NAME", "system").
    actorKind: varchar('actor_kind', { length: 8 }).notNull(),
    actorUserId: uuid('actor_user_id'),
    actorLabel: varchar('actor_label', { length: 320 }).notNull(),
    clientAddress: varchar('client_address', { length: 64 }),
    userAgent: varchar('user_agent', { length: 300 }),
    // Whose own log shows the event (null: nobody's, e.g. a failed sign-in for no account).
    subjectUserId: uuid('subject_user_id'),
    // The organisation whose log shows it too, if any.
    organizationId: uuid('organization_id'),
    // For an event about a member's personal key, calendar feed or webhook endpoint: the
    // organisations it reached when the event was written (db/queries/access.ts), whose
    // logs show it too. Decided at write time, as an audit log must: a later change of
    // access, membership or policy, or the object's deletion, leaves past events where they are.
    reachesOrganizationIds: uuid('reaches_organization_ids').array(),
    objectType: varchar('object_type', { length: 32 }).notNull(),
    objectId: varchar('object_id', { length: 64 }),
    objectLabel: varchar('object_label', { length: 320 }),
    details: jsonb('details').$type<Record<string, string | number | boolean | null>>(),
  },
  (t) => [
    index('security_events_subject_idx').on(t.subjectUserId, t.at.desc(), t.id.desc()),
    index('security_events_org_idx').on(t.organizationId, t.at.desc(), t.id.desc()),
    index('security_events_at_idx').on(t.at),
    index('security_events_object_idx').on(t.objectId, t.kind),
    index('security_events_reaches_idx').using('gin', t.reachesOrganizationIds),
  ],
);

export type User = typeof users.$inferSelect;
export type Contract = typeof contracts.$inferSelect;
export type NewContract = typeof contracts.$inferInsert;
export type AccessToken = typeof accessTokens.$inferSelect;
