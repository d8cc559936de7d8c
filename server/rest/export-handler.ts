import { getDb } from '@/db/client';
import type { ContractDetailRow } from '@/db/queries/contracts';
import { csvHeaderLine, csvRecordWriter, toCsvLines, UTF8_BOM } from '@/server/contracts/csv';
import { toContractFilters, toSort } from '@/server/contracts/query';
import { utcToday } from '@/server/dates';
import { EXPORT_BODY_FIELDS, exportContractsBody, type ExportContractsBody } from '@/server/contracts/schemas';
import { contractsInPages } from '@/server/contracts/service';
import { AppError } from '@/server/errors';
import { createInnerContext } from '@/server/trpc/init';
import { authenticateApiRequest } from './authenticate';
import { baseApiHeaders } from './openapi-handler';
import { clientAddressOf } from './client-address';
import { describeForLog, errorResponse, newRequestId, toAppError } from './responses';

const MAX_BODY_BYTES = 16 * 1024;
const PAGE_SIZE = 1000;

/**
 * POST /api/v1/contracts/export: a plain route handler (trpc-to-openapi only answers
 * JSON) with the same authentication, rate limit and query as the JSON operations. The
 * CSV is streamed a keyset page at a time, pulled by the client, so memory stays flat.
 */
export async function handleExportRequest(req: Request): Promise<Response> {
  const requestId = newRequestId();
  const headers = baseApiHeaders(requestId);
  if (req.method !== 'POST') {
    headers.set('Allow', 'POST');
    return errorResponse(
      new AppError('method_not_allowed', `${req.method} is not allowed here; use POST.`),
      requestId,
      headers,
    );
  }
  try {
    const db = await getDb();
    const ctx = createInnerContext({
      db,
      requestId,
      headers: req.headers,
      clientIp: clientAddressOf(req.headers),
      setHeader: (name, value) => headers.set(name, value),
    });
    const caller = await authenticateApiRequest(ctx, 'export');
    const body = await readBody(req);
    const pages = contractsInPages(db, caller, toContractFilters(body), PAGE_SIZE, toSort(body.sort));
    const toRecord = csvRecordWriter(body.columns);
    // The first page is read before answering, so that a 403 or a database failure is
    // still a proper JSON error rather than a broken download.
    const first = await pages.next();

    headers.set('Content-Type', 'text/csv; charset=utf-8');
    headers.set('Content-Disposition', `attachment; filename="contracts-${utcToday()}.csv"`);
    const encoder = new TextEncoder();
    let pending: IteratorResult<unknown> | undefined = first;
    // Set when the client goes away. A page query may still be running then: its result
    // (or its failure) is dropped instead of being written to a closed stream.
    let cancelled = false;
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(encoder.encode(`${body.bom ? UTF8_BOM : ''}${csvHeaderLine(body.columns)}`));
      },
      async pull(controller) {
        try {
          const page = pending ?? (await pages.next());
          pending = undefined;
          if (cancelled) return;
          if (page.done) {
            controller.close();
            return;
          }
          controller.enqueue(encoder.encode(toCsvLines((page.value as ContractDetailRow[]).map(toRecord))));
        } catch (error) {
          if (cancelled) return;
          // Headers are sent: the only honest signal left is an aborted transfer.
          console.error(`[${requestId}] export failed mid-stream: ${describeForLog(error)}`);
          controller.error(error);
        }
      },
      async cancel() {
        // The client went away: no further page is read. A query in flight finishes on
        // its own (one page, bounded by the statement timeout) and frees its connection.
        cancelled = true;
        await pages.return(undefined);
      },
    });
    return new Response(stream, { status: 200, headers });
  } catch (error) {
    return errorResponse(toAppError(error, requestId), requestId, headers);
  }
}

/** The optional JSON body: none, empty or {} mean no filters; anything malformed is a 400. */
async function readBody(req: Request): Promise<ExportContractsBody> {
  const declared = Number(req.headers.get('content-length') ?? 0);
  if (declared > MAX_BODY_BYTES) throw tooLarge();
  const text = await readLimited(req, MAX_BODY_BYTES);
  if (text.trim() === '') return {};
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new AppError('invalid_request', 'The request body is not valid JSON.', [
      { param: 'body', message: 'Expected a JSON object such as {"status": "completed"}.' },
    ]);
  }
  const parsed = exportContractsBody.safeParse(json);
  if (!parsed.success) {
    const details = parsed.error.issues.flatMap((issue) =>
      issue.code === 'unrecognized_keys'
        ? issue.keys.map((key) => ({ param: key, message: `Unknown field ${key}; allowed fields are ${EXPORT_BODY_FIELDS.join(', ')}.` }))
        : [{ param: issue.path.length > 0 ? issue.path.map(String).join('.') : 'body', message: issue.message }],
    );
    throw new AppError('invalid_request', details.map((d) => d.message).join('; '), details);
  }
  return parsed.data;
}

function tooLarge() {
  return new AppError('invalid_request', `The request body is larger than ${MAX_BODY_BYTES} bytes.`, [
    { param: 'body', message: `At most ${MAX_BODY_BYTES} bytes.` },
  ]);
}

/** Reads the body as text, refusing more than `limit` bytes whatever Content-Length claims. */
async function readLimited(req: Request, limit: number): Promise<string> {
  if (!req.body) return '';
  const reader = req.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel();
      throw tooLarge();
    }
    chunks.push(value);
  }
  return new TextDecoder('utf-8', { fatal: false }).decode(Buffer.concat(chunks));
}
