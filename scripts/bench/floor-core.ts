/**
 * What both floors share (scripts/bench/floor.ts, the bare node:http floor, and
 * scripts/bench/next-floor/, the plain Next.js route handlers): the database pool with the
 * app's settings, the app's own SQL texts (./statements.ts), the API key lookup with the
 * app's 30-second cache, and the list and get-one answers, written as the app writes
 * them. No tRPC, trpc-to-openapi, zod or Drizzle at run time (Drizzle prints each
 * statement's text once); what each floor adds around this is its transport.
 */
import { drizzle } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import type { Database } from '@/db/client';
import type { CallerScope } from '@/db/queries/access';
import type { ContractDetailRow } from '@/db/queries/contracts/columns';
import type { ContractFilters } from '@/db/queries/contracts/filters';
import * as schema from '@/db/schema';
import { CONTRACT_STATUSES, DEFAULT_SORT, type ContractStatus } from '@/lib/contracts';
import { hashToken, TOKEN_FORMATS } from '@/server/access/token-format';
import { encodeCursor, filtersFingerprint } from '@/server/contracts/cursor';
import { toDetail } from '@/server/contracts/shape';
import { requestStatements, StatementTexts, type Compiled } from './statements';

export type Row = Record<string, unknown>;

export interface FloorDatabase {
  client: postgres.Sql;
  texts: StatementTexts;
  prepare: boolean;
  run: (c: Compiled) => Promise<Row[]>;
}

/** The pool, with the same settings as db/client.ts. */
export function openFloorDatabase(url: string, applicationName: string, prepare = process.env.DATABASE_PREPARE !== 'false'): FloorDatabase {
  const client = postgres(url, {
    max: Number(process.env.DATABASE_POOL_MAX ?? 10),
    prepare,
    idle_timeout: 30,
    connect_timeout: 5,
    onnotice: () => {},
    connection: { application_name: applicationName, statement_timeout: 5000 },
  });
  // Drizzle is only used to print the statements once (toSQL); constructing it also gives
  // the client the same value parsers the app's client has (timestamps as text).
  const texts = new StatementTexts(drizzle({ client, schema }) as unknown as Database);
  const run = (c: Compiled) => client.unsafe(c.text, c.params as never[], { prepare }) as unknown as Promise<Row[]>;
  return { client, texts, prepare, run };
}

// Keys: the same policy as server/access/tokens.ts ----------------------------------------

interface CachedKey {
  tokenId: string;
  userId: string;
  expiresAt: number | null;
  revoked: boolean;
  cachedUntil: number;
}
const keys = new Map<string, CachedKey>();

export interface VerifiedKey {
  tokenId: string;
  userId: string;
  /** Answered from the cache (the app then asks the store for a revocation marker). */
  cached: boolean;
}

/** Format and checksum first (no database for a mistyped key), then the cached lookup by hash. */
export async function verifyKey(db: FloorDatabase, presented: string | null | undefined): Promise<VerifiedKey | undefined> {
  if (typeof presented !== 'string' || !TOKEN_FORMATS.api_key.isWellFormed(presented)) return undefined;
  const hash = hashToken(presented);
  const now = Date.now();
  let entry = keys.get(hash);
  const cached = entry !== undefined && entry.cachedUntil > now;
  if (!entry || !cached) {
    const [row] = await db.run(db.texts.compile(requestStatements.keyByHash(hash)));
    if (!row) return undefined;
    entry = {
      tokenId: row.id as string,
      userId: row.user_id as string,
      expiresAt: row.expires_at ? new Date(row.expires_at as string).getTime() : null,
      revoked: row.revoked_at !== null,
      cachedUntil: now + 30_000,
    };
    keys.set(hash, entry);
  }
  if (entry.revoked || (entry.expiresAt !== null && entry.expiresAt <= now)) return undefined;
  return { tokenId: entry.tokenId, userId: entry.userId, cached };
}

/** The caller's scope, read at request time as the app does. */
export async function scopeOf(db: FloorDatabase, userId: string): Promise<CallerScope> {
  const memberships = await db.run(db.texts.compile(requestStatements.memberships(userId)));
  return { userId, organizationIds: memberships.map((m) => m.id as string) };
}

// Answers --------------------------------------------------------------------------------

export interface Answer {
  status: number;
  body: unknown;
}

export const failure = (status: number, code: string): Answer => ({ status, body: { success: false, error: { code, message: code, details: [] } } });

const iso = (value: unknown) => new Date(value as string).toISOString();

function summary(r: Row) {
  return {
    id: r.id,
    title: r.title,
    status: r.status,
    file_name: r.file_name,
    file_size: r.file_size,
    created_at: iso(r.created_at),
    updated_at: iso(r.updated_at),
    organization_id: r.organization_id,
  };
}

export function detailRow(r: Row): ContractDetailRow {
  return {
    id: r.id as string,
    title: r.title as string,
    status: r.status as ContractStatus,
    fileName: r.file_name as string,
    fileSize: r.file_size as number,
    createdAt: new Date(r.created_at as string),
    updatedAt: new Date(r.updated_at as string),
    organizationId: r.organization_id as string | null,
    expirationDate: r.expiration_date as string | null,
    renewalDate: r.renewal_date as string | null,
    autoRenewal: r.auto_renewal as boolean | null,
    noticePeriod: r.notice_period as string | null,
    renewalTerm: r.renewal_term as string | null,
    contractValue: r.contract_value === null ? null : Number(r.contract_value),
    currency: r.currency as string | null,
    provider: r.provider as string | null,
    client: r.client as string | null,
    summary: r.summary as string | null,
    confidenceScore: r.confidence_score as number | null,
  };
}

const INTEGER = /^(0|[1-9][0-9]{0,15})$/;
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function filtersOf(status: unknown, organizationId: unknown): ContractFilters | undefined {
  if (status !== undefined && !CONTRACT_STATUSES.includes(status as ContractStatus)) return undefined;
  if (organizationId !== undefined && (typeof organizationId !== 'string' || !UUID.test(organizationId))) return undefined;
  return { status: status as ContractStatus | undefined, organizationId: organizationId as string | undefined };
}

/** GET /api/v1/contracts (limit, offset, status, organization_id). */
export async function listAnswer(db: FloorDatabase, scope: CallerScope, query: URLSearchParams): Promise<Answer> {
  const limitText = query.get('limit') ?? '50';
  const offsetText = query.get('offset') ?? '0';
  if (!INTEGER.test(limitText) || !INTEGER.test(offsetText)) return failure(400, 'invalid_request');
  const limit = Number(limitText);
  const offset = Number(offsetText);
  if (limit < 1 || limit > 100) return failure(400, 'invalid_request');
  const filters = filtersOf(query.get('status') ?? undefined, query.get('organization_id') ?? undefined);
  if (!filters) return failure(400, 'invalid_request');
  if (filters.organizationId && !scope.organizationIds.includes(filters.organizationId)) return failure(403, 'forbidden');
  // No q here, so the total is always exact (a q total is capped: pagination.total_exact).
  // One row more than the page, as the app reads it: whether another page follows, and its cursor.
  const page = requestStatements.page(scope, filters, { limit: limit + 1, offset });
  const count = requestStatements.count(scope, filters);
  const [read, counts] = await Promise.all([
    page ? db.run(db.texts.compile(page)) : [],
    count ? db.run(db.texts.compile(count)) : [],
  ]);
  const total = counts.reduce((sum, r) => sum + Number(r.n), 0);
  const hasMore = read.length > limit;
  const rows = hasMore ? read.slice(0, limit) : read;
  const last = rows.at(-1);
  const fingerprint = filtersFingerprint({ status: filters.status, organization_id: filters.organizationId });
  const nextCursor = hasMore && last ? encodeCursor(DEFAULT_SORT, { key: last.sort_key_text as string | null, id: last.id as string }, fingerprint) : null;
  return {
    status: 200,
    body: { success: true, data: { contracts: rows.map(summary), pagination: { limit, offset, total, total_exact: true, next_cursor: nextCursor, has_more: hasMore } } },
  };
}

/** GET /api/v1/contracts/{id}. */
export async function getOneAnswer(db: FloorDatabase, scope: CallerScope, id: string): Promise<Answer> {
  if (!UUID.test(id)) return failure(400, 'invalid_request');
  const [row] = await db.run(db.texts.compile(requestStatements.contract(scope, id)));
  if (!row) return failure(404, 'not_found');
  return { status: 200, body: { success: true, data: { contract: toDetail(detailRow(row)) } } };
}
