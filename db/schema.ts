import { sql } from 'drizzle-orm';
import {
  boolean,
  char,
  check,
  date,
  index,
  integer,
  numeric,
  pgEnum,
  pgTable,
  primaryKey,
  real,
  text,
  timestamp,
  uuid,
  varchar,
} from 'drizzle-orm/pg-core';

const timestamps = {
  createdAt: timestamp('created_at', { withTimezone: true, precision: 3 }).notNull().defaultNow(),
};

export const users = pgTable('users', {
  id: uuid('id').primaryKey().defaultRandom(),
  email: varchar('email', { length: 320 }).notNull().unique(),
  name: varchar('name', { length: 120 }),
  // bcrypt hash; null for accounts that only sign in through OAuth.
  passwordHash: text('password_hash'),
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

export const CONTRACT_STATUSES = ['pending', 'processing', 'completed', 'failed'] as const;
export type ContractStatus = (typeof CONTRACT_STATUSES)[number];
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
    contractValue: numeric('contract_value', { precision: 16, scale: 2, mode: 'number' }),
    currency: char('currency', { length: 3 }),
    provider: varchar('provider', { length: 300 }),
    client: varchar('client', { length: 300 }),
    summary: text('summary'),
    confidenceScore: real('confidence_score'),
  },
  (t) => [
    check('contracts_confidence_score_range', sql`${t.confidenceScore} BETWEEN 0 AND 1`),
    check('contracts_currency_format', sql`${t.currency} ~ '^[A-Z]{3}$'`),
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
    // that expression (db/queries/contract-expressions.ts builds the same one), ascending
    // with nulls last, the order of sort=expiration_date and sort=renewal_date.
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
    // q: substring search in the title and, once extracted, the parties (pg_trgm).
    index('contracts_search_idx').using(
      'gin',
      sql`(title || E'\\n' || CASE WHEN status = 'completed' THEN coalesce(provider, '') || E'\\n' || coalesce(client, '') ELSE '' END) gin_trgm_ops`,
    ),
  ],
);

export const apiKeys = pgTable(
  'api_keys',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    userId: uuid('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    name: varchar('name', { length: 64 }).notNull(),
    // SHA-256 of the full key, hex. The key itself is never stored.
    keyHash: char('key_hash', { length: 64 }).notNull().unique(),
    // Non-secret hint shown in the list: the prefix and the last four characters.
    hint: varchar('hint', { length: 32 }).notNull(),
    createdAt: timestamp('created_at', { withTimezone: true, precision: 3 }).notNull().defaultNow(),
    lastUsedAt: timestamp('last_used_at', { withTimezone: true, precision: 3 }),
    expiresAt: timestamp('expires_at', { withTimezone: true, precision: 3 }),
    revokedAt: timestamp('revoked_at', { withTimezone: true, precision: 3 }),
  },
  (t) => [index('api_keys_user_idx').on(t.userId, t.createdAt.desc())],
);

// Calendar feeds: calendar apps cannot send headers, so a feed is read with a token in
// its URL. The token is not an API key (it reads only dates, and only as a feed); like a
// key it is shown once and stored as its SHA-256 hash.
export const calendarFeeds = pgTable(
  'calendar_feeds',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    userId: uuid('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    name: varchar('name', { length: 64 }).notNull(),
    tokenHash: char('token_hash', { length: 64 }).notNull().unique(),
    hint: varchar('hint', { length: 32 }).notNull(),
    createdAt: timestamp('created_at', { withTimezone: true, precision: 3 }).notNull().defaultNow(),
    lastUsedAt: timestamp('last_used_at', { withTimezone: true, precision: 3 }),
    revokedAt: timestamp('revoked_at', { withTimezone: true, precision: 3 }),
  },
  (t) => [index('calendar_feeds_user_idx').on(t.userId, t.createdAt.desc())],
);

export type User = typeof users.$inferSelect;
export type Contract = typeof contracts.$inferSelect;
export type NewContract = typeof contracts.$inferInsert;
export type ApiKey = typeof apiKeys.$inferSelect;
