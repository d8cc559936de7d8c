import { apiKeyCredential, authenticate } from '@/server/access/authenticate';
import { csvExportResponse } from '@/server/contracts/csv-export';
import { eventsCursorNow } from '@/server/events/service';
import { toContractFilters, toSort } from '@/server/contracts/query';
import { EXPORT_BODY_FIELDS, exportContractsBody, type ExportContractsBody } from '@/server/contracts/schemas';
import { config } from '@/server/config';
import { AppError, invalidRequest } from '@/server/errors';
import { parseJsonBody, readBodyText } from '@/server/http/body';
import type { RequestContext } from '@/server/http/context';
import { rejectQueryParameters } from '@/server/http/query';
import { addDeprecationHeaders, linkOrigin, usedDeprecations } from './deprecation-headers';
import { EXPORT_OPERATION_ID } from '@/server/http/api-paths';

const MAX_BODY_BYTES = 16 * 1024;

/**
 * POST /api/v1/contracts/export: a plain handler (trpc-to-openapi only answers JSON) with
 * the same authentication, rate limit and query as the JSON operations. The CSV is the
 * API's detail flattened, streamed a keyset page at a time, pulled by the client.
 */
export async function serveExport(req: Request, ctx: RequestContext, responseHeaders: Headers): Promise<Response> {
  // The key first (a bad key is a 401 whatever the body), but the export quota is spent
  // only on a well-formed request: a malformed or slow body costs none of it.
  const caller = await authenticate(ctx, apiKeyCredential(ctx.headers, 'export'), { chargeLater: true });
  let body: ExportContractsBody;
  try {
    // `?status=completed` on the export would otherwise export everything.
    rejectQueryParameters(req.url, [], 'The export takes its filters in the JSON request body, for example {"status": "completed"}.');
    body = await readExportBody(req, ctx);
    // Only this handler reads the body: the deprecation headers of its fields are added
    // here (the router adds those of the query and of the answer's fields).
    const used = usedDeprecations(EXPORT_OPERATION_ID, { body: Object.keys(body).filter((field) => body[field as keyof ExportContractsBody] !== undefined) });
    addDeprecationHeaders(responseHeaders, used, used.length > 0 ? linkOrigin(ctx.headers, req.url) : '');
  } catch (error) {
    // Still an authenticated answer: it carries the quota's headers, unchanged.
    await caller.show();
    throw error;
  }
  await caller.charge();
  // The cursor before the first row is read, and before the access the file is read with:
  // whatever commits later, a change of contracts or of the key's access, is an event after
  // the cursor. (The access read while authenticating may be older than the cursor: an
  // access.reduced between the two would be behind the cursor and yet not in that access.)
  responseHeaders.set('X-Events-Cursor', await eventsCursorNow(ctx.readDb));
  const scope = await caller.rescope();
  // Its first page is read before answering, so that a 403 or a database failure is still a JSON error.
  return csvExportResponse(
    ctx.readDb,
    scope,
    { filters: toContractFilters(body), sort: toSort(body.sort), columns: body.columns, bom: body.bom, dateFormat: body.date_format, format: body.format },
    ctx.requestId,
    responseHeaders,
  );
}

/**
 * The optional JSON body: none, empty or {} mean no filters; anything malformed is a 400;
 * a body still arriving after the request deadline's length is a 408 (its wait does not
 * count against the deadline itself, which bounds the server's work).
 */
async function readExportBody(req: Request, ctx: Pick<RequestContext, 'waitForClient'>): Promise<ExportContractsBody> {
  const tooLarge = () =>
    new AppError('invalid_request', `The request body is larger than ${MAX_BODY_BYTES} bytes.`, [{ param: 'body', message: `At most ${MAX_BODY_BYTES} bytes.` }]);
  // Read as JSON whatever its Content-Type, so that `curl -d '{"status":"completed"}'` works.
  const text = await readBodyText(req, MAX_BODY_BYTES, tooLarge, { ms: config().requestDeadlineMs, wait: ctx.waitForClient });
  const json = parseJsonBody(text, '{"status": "completed"}');
  if (json === undefined) return {};
  const parsed = exportContractsBody.safeParse(json);
  if (!parsed.success) throw invalidRequest(parsed.error.issues, EXPORT_BODY_FIELDS);
  return parsed.data;
}
