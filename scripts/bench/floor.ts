/**
 * The bare floor: a minimal node:http server over postgres.js that answers the API's list,
 * get-one and export requests with the very same SQL statements the app sends (texts
 * taken from the app's statement builders, see statements.ts), with the same key cache
 * (30 s, checksum before any lookup), but without Next.js, tRPC, zod or Drizzle at run
 * time, and without the rate limit (no Redis call). It is what the hardware and the
 * database allow; the app is measured against it.
 *
 * The list and get-one answers, the key check and the pool are shared with the Next.js
 * floor (./floor-core.ts).
 *
 * Usage: DATABASE_URL=... FLOOR_PORT=... tsx scripts/bench/floor.ts
 */
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { CallerScope } from '@/db/queries/access';
import type { Cursor } from '@/db/queries/contracts/page';
import { csvHeaderLine, csvLinesWriter } from '@/server/contracts/csv';
import { toDetail } from '@/server/contracts/shape';
import { detailRow, failure, filtersOf, getOneAnswer, listAnswer, openFloorDatabase, scopeOf, verifyKey, type Answer } from './floor-core';
import { requestStatements } from './statements';

const url = process.env.DATABASE_URL;
if (!url) throw new Error('DATABASE_URL is required');
const port = Number(process.env.FLOOR_PORT ?? 3999);
const db = openFloorDatabase(url, 'cda-bench-floor');

async function authenticate(req: http.IncomingMessage): Promise<CallerScope | undefined> {
  const presented = req.headers['x-api-key'];
  const key = await verifyKey(db, typeof presented === 'string' ? presented : undefined);
  return key ? scopeOf(db, key.userId) : undefined;
}

function send(res: http.ServerResponse, { status, body }: Answer) {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(text),
    'X-Request-Id': `req_${randomUUID().replaceAll('-', '')}`,
    'Cache-Control': 'no-store',
  });
  res.end(text);
}

const fail = (res: http.ServerResponse, status: number, code: string) => send(res, failure(status, code));

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
    return statement ? (await db.run(db.texts.compile(statement))).map((r) => ({ ...detailRow(r), sortKeyText: r.sort_key_text as string | null })) : [];
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
    if (rows.length > 0 && !res.write(csvLines(rows.map((row) => toDetail(row))))) {
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
    if (path === '/api/v1/contracts' && req.method === 'GET') return send(res, await listAnswer(db, scope, target.searchParams));
    if (path === '/api/v1/contracts/export' && req.method === 'POST') return exportCsv(req, res, scope);
    const id = /^\/api\/v1\/contracts\/([^/]+)$/.exec(path)?.[1];
    if (id && req.method === 'GET') return send(res, await getOneAnswer(db, scope, id));
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
  void db.client.end({ timeout: 2 }).finally(() => process.exit(0));
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
