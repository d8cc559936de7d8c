/**
 * The bare floor: a minimal node:http server over postgres.js that answers the API's list,
 * get-one and export requests with the very same SQL statements the app sends (texts
 * taken from the app's statement builders, see statements.ts), with the same key cache
 * (30 s, checksum before any lookup), but without Next.js, tRPC, zod or Drizzle at run
 * time, and without the rate limit (no Redis call). It is what the hardware and the
 * database allow; the app is measured against it.
 *
 * Usage: DATABASE_URL=... FLOOR_PORT=... tsx scripts/bench/floor.ts
 */
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { drizzle } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import type { Database } from '@/db/client';
import type { CallerScope } from '@/db/queries/access';
import type { ContractDetailRow } from '@/db/queries/contracts/columns';
import type { ContractFilters } from '@/db/queries/contracts/filters';
import type { Cursor } from '@/db/queries/contracts/page';
import * as schema from '@/db/schema';
import { CONTRACT_STATUSES, DEFAULT_SORT, type ContractStatus } from '@/lib/contracts';
import { hashToken, TOKEN_FORMATS } from '@/server/access/token-format';
import { csvHeaderLine, csvLinesWriter } from '@/server/contracts/csv';
import { encodeCursor, filtersFingerprint } from '@/server/contracts/cursor';
import { toDetail } from '@/server/contracts/shape';
import { requestStatements, StatementTexts, type Compiled } from './statements';

const url = process.env.DATABASE_URL;
if (!url) throw new Error('DATABASE_URL is required');
const port = Number(process.env.FLOOR_PORT ?? 3999);
const prepare = process.env.DATABASE_PREPARE !== 'false';

// The same pool settings as db/client.ts.
const client = postgres(url, {
  max: Number(process.env.DATABASE_POOL_MAX ?? 10),
  prepare,
  idle_timeout: 30,
  connect_timeout: 5,
  onnotice: () => {},
  connection: { application_name: 'cda-bench-floor', statement_timeout: 5000 },
});
// Drizzle is only used to print the statements once (toSQL); constructing it also gives
// the client the same value parsers the app's client has (timestamps as text).
const texts = new StatementTexts(drizzle({ client, schema }) as unknown as Database);

type Row = Record<string, unknown>;
const run = (c: Compiled) => client.unsafe(c.text, c.params as never[], { prepare }) as unknown as Promise<Row[]>;

// Key cache: the same policy as server/access/tokens.ts.
interface CachedKey {
  userId: string;
  expiresAt: number | null;
  revoked: boolean;
  cachedUntil: number;
}
const keys = new Map<string, CachedKey>();

async function authenticate(req: http.IncomingMessage): Promise<CallerScope | undefined> {
  const presented = req.headers['x-api-key'];
  if (typeof presented !== 'string' || !TOKEN_FORMATS.api_key.isWellFormed(presented)) return undefined;
  const hash = hashToken(presented);
  const now = Date.now();
  let entry = keys.get(hash);
  if (!entry || entry.cachedUntil <= now) {
    const [row] = await run(texts.compile(requestStatements.keyByHash(hash)));
    if (!row) return undefined;
    entry = {
      userId: row.user_id as string,
      expiresAt: row.expires_at ? new Date(row.expires_at as string).getTime() : null,
      revoked: row.revoked_at !== null,
      cachedUntil: now + 30_000,
    };
    keys.set(hash, entry);
  }
  if (entry.revoked || (entry.expiresAt !== null && entry.expiresAt <= now)) return undefined;
  const memberships = await run(texts.compile(requestStatements.memberships(entry.userId)));
  return { userId: entry.userId, organizationIds: memberships.map((m) => m.id as string) };
}

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

function detailRow(r: Row): ContractDetailRow {
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
    contractValue: r.contract_value === null ? null : Number(r.contract_value),
    currency: r.currency as string | null,
    provider: r.provider as string | null,
    client: r.client as string | null,
    summary: r.summary as string | null,
    confidenceScore: r.confidence_score as number | null,
  };
}

function send(res: http.ServerResponse, status: number, body: unknown) {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(text),
    'X-Request-Id': `req_${randomUUID().replaceAll('-', '')}`,
    'Cache-Control': 'no-store',
  });
  res.end(text);
}

const fail = (res: http.ServerResponse, status: number, code: string) =>
  send(res, status, { success: false, error: { code, message: code, details: [] } });

const INTEGER = /^(0|[1-9][0-9]{0,15})$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function filtersOf(status: unknown, organizationId: unknown): ContractFilters | undefined {
  if (status !== undefined && !CONTRACT_STATUSES.includes(status as ContractStatus)) return undefined;
  if (organizationId !== undefined && (typeof organizationId !== 'string' || !UUID.test(organizationId))) return undefined;
  return { status: status as ContractStatus | undefined, organizationId: organizationId as string | undefined };
}

async function list(res: http.ServerResponse, scope: CallerScope, query: URLSearchParams) {
  const limitText = query.get('limit') ?? '50';
  const offsetText = query.get('offset') ?? '0';
  if (!INTEGER.test(limitText) || !INTEGER.test(offsetText)) return fail(res, 400, 'invalid_request');
  const limit = Number(limitText);
  const offset = Number(offsetText);
  if (limit < 1 || limit > 100) return fail(res, 400, 'invalid_request');
  const filters = filtersOf(query.get('status') ?? undefined, query.get('organization_id') ?? undefined);
  if (!filters) return fail(res, 400, 'invalid_request');
  if (filters.organizationId && !scope.organizationIds.includes(filters.organizationId)) return fail(res, 403, 'forbidden');
  // One row more than the page, as the app reads it: whether another page follows, and its cursor.
  const page = requestStatements.page(scope, filters, { limit: limit + 1, offset });
  const count = requestStatements.count(scope, filters);
  const [read, counts] = await Promise.all([
    page ? run(texts.compile(page)) : [],
    count ? run(texts.compile(count)) : [],
  ]);
  const total = counts.reduce((sum, r) => sum + Number(r.n), 0);
  const hasMore = read.length > limit;
  const rows = hasMore ? read.slice(0, limit) : read;
  const last = rows.at(-1);
  const fingerprint = filtersFingerprint({ status: filters.status, organization_id: filters.organizationId });
  const nextCursor = hasMore && last ? encodeCursor(DEFAULT_SORT, { key: last.sort_key_text as string | null, id: last.id as string }, fingerprint) : null;
  send(res, 200, {
    success: true,
    data: { contracts: rows.map(summary), pagination: { limit, offset, total, next_cursor: nextCursor, has_more: hasMore } },
  });
}

async function getOne(res: http.ServerResponse, scope: CallerScope, id: string) {
  if (!UUID.test(id)) return fail(res, 400, 'invalid_request');
  const [row] = await run(texts.compile(requestStatements.contract(scope, id)));
  if (!row) return fail(res, 404, 'not_found');
  send(res, 200, { success: true, data: { contract: toDetail(detailRow(row)) } });
}

async function readBody(req: http.IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

async function exportCsv(req: http.IncomingMessage, res: http.ServerResponse, scope: CallerScope) {
  const text = await readBody(req);
  let body: Record<string, unknown> = {};
  try {
    if (text.trim() !== '') body = JSON.parse(text) as Record<string, unknown>;
  } catch {
    return fail(res, 400, 'invalid_request');
  }
  const filters = filtersOf(body.status, body.organization_id);
  if (!filters) return fail(res, 400, 'invalid_request');
  if (filters.organizationId && !scope.organizationIds.includes(filters.organizationId)) return fail(res, 403, 'forbidden');
  const PAGE = 1000;
  const pageOf = async (after: Cursor | undefined) => {
    const statement = requestStatements.exportPage(scope, filters, { limit: PAGE, after });
    return statement ? (await run(texts.compile(statement))).map((r) => ({ ...detailRow(r), sortKeyText: r.sort_key_text as string | null })) : [];
  };
  // As the app does: the first page is read before the response starts.
  let rows = await pageOf(undefined);
  res.writeHead(200, {
    'Content-Type': 'text/csv; charset=utf-8',
    'Content-Disposition': `attachment; filename="contracts-${new Date().toISOString().slice(0, 10)}.csv"`,
    'X-Request-Id': `req_${randomUUID().replaceAll('-', '')}`,
    'Cache-Control': 'no-store',
  });
  res.write(csvHeaderLine());
  const csvLines = csvLinesWriter();
  for (;;) {
    if (rows.length > 0 && !res.write(csvLines(rows.map(toDetail)))) {
      await new Promise((resolve) => res.once('drain', resolve));
    }
    if (rows.length < PAGE || res.destroyed) break;
    const last = rows[rows.length - 1]!;
    rows = await pageOf({ key: last.sortKeyText, id: last.id });
  }
  res.end();
}

const server = http.createServer((req, res) => {
  const handle = async () => {
    const target = new URL(req.url ?? '/', 'http://floor');
    const path = target.pathname;
    if (!path.startsWith('/api/v1/contracts')) return fail(res, 404, 'not_found');
    const scope = await authenticate(req);
    if (!scope) return fail(res, 401, 'unauthorized');
    if (path === '/api/v1/contracts' && req.method === 'GET') return list(res, scope, target.searchParams);
    if (path === '/api/v1/contracts/export' && req.method === 'POST') return exportCsv(req, res, scope);
    const id = /^\/api\/v1\/contracts\/([^/]+)$/.exec(path)?.[1];
    if (id && req.method === 'GET') return getOne(res, scope, id);
    return fail(res, 404, 'not_found');
  };
  handle().catch((error: unknown) => {
    console.error('floor:', (error as Error).message);
    if (!res.headersSent) fail(res, 500, 'internal_error');
    else res.destroy();
  });
});
server.keepAliveTimeout = 65_000;
server.listen(port, '127.0.0.1', () => console.log(`floor listening on 127.0.0.1:${port}`));

const stop = () => {
  server.close();
  void client.end({ timeout: 2 }).finally(() => process.exit(0));
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
