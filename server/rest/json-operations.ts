import { ifNoneMatchOf, matchesAny, notModified, weakEtag } from '@/server/http/conditional';
import type { DeferredRateLimit, RequestContext } from '@/server/http/context';
import { bytesResponse } from '@/server/http/responses';
import { createCallerFactory } from '@/server/trpc/init';
import { restRouter } from '@/server/trpc/root';

/**
 * The REST API's JSON operations (list, get one), called through tRPC's public caller
 * (`createCallerFactory`, built once per process; a caller per request, for its context)
 * with their input read as trpc-to-openapi reads it (query parameters, a repeated one as
 * an array, then the path parameters). The procedures' middleware, input and output
 * validation run as in any tRPC call, and a failure is thrown as it is. trpc-to-openapi
 * writes the document; its runtime is not used, because its fetch adapter builds a new
 * handler on every request (and, outside production, regenerates the whole document each
 * time): docs/benchmarks.md has the figures. tests/api/openapi-adapter.test.ts holds this
 * against the library's own adapter, so that an upgrade that changes its behaviour fails.
 *
 * Failures are thrown to the router, which answers them in the API's envelope.
 *
 * Every answer carries a weak ETag of its body; a GET with If-None-Match naming it gets
 * 304 with no body, and does not count against the key's rate limit (DeferredRateLimit).
 * `private, no-cache`: a client's own cache may keep the answer but must revalidate it
 * before each use (the revalidation is free when nothing changed); no shared cache keeps
 * it, and it differs by key (Vary).
 */

const createRestCaller = createCallerFactory(restRouter);
type RestCaller = ReturnType<typeof createRestCaller>;
/** The input as the request carries it: strings, a repeated parameter as an array. The procedure's schema parses it. */
type RawInput = Record<string, string | string[]>;

/**
 * Each JSON operation of the document, by the operationId its procedure's OpenAPI metadata
 * gives it, as a call of that procedure (type-checked: a renamed procedure fails tsc). A
 * procedure added to restRouter without an entry here fails the route table's first use
 * (jsonOperation below), and with it every API test.
 */
const CALLS: Record<string, (caller: RestCaller, input: RawInput) => Promise<unknown>> = {
  listContracts: (caller, input) => caller.contracts.list(input as never),
  getContract: (caller, input) => caller.contracts.get(input as never),
  listEvents: (caller, input) => caller.events.list(input as never),
  getEvent: (caller, input) => caller.events.get(input as never),
};

/**
 * The handler of one JSON operation of the route table (server/rest/router.ts, built from
 * the document): its document path (below /api/v1, with {parameters}) and operationId.
 */
export function jsonOperation(path: string, operationId: string): (req: Request, ctx: RequestContext, responseHeaders: Headers) => Promise<Response> {
  const call = CALLS[operationId];
  if (!call) throw new Error(`no procedure call for the JSON operation ${operationId} (server/rest/json-operations.ts)`);
  const source = path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\\?\{([^}]+)\\?\}/g, '(?<$1>[^/]+)');
  const pattern = new RegExp(`^${source}/?$`);
  return (req, ctx, responseHeaders) => serveJsonOperation(pattern, call, req, ctx, responseHeaders);
}

async function serveJsonOperation(
  pattern: RegExp,
  operation: (caller: RestCaller, input: RawInput) => Promise<unknown>,
  req: Request,
  ctx: RequestContext,
  responseHeaders: Headers,
): Promise<Response> {
  const url = new URL(req.url);
  const match = pattern.exec(url.pathname.replace(/^\/api\/v1/, ''));
  // The router only sends this operation's paths here.
  if (!match) throw new Error(`not a path of this JSON operation: ${url.pathname}`);

  const input: RawInput = {};
  for (const name of new Set(url.searchParams.keys())) {
    const values = url.searchParams.getAll(name);
    input[name] = values.length === 1 ? values[0]! : values;
  }
  for (const [name, value] of Object.entries(match.groups ?? {})) {
    // A query parameter named like a path parameter is refused as given twice, rather than
    // silently overwritten (trpc-to-openapi's adapter would overwrite it).
    input[name] = name in input ? [...[input[name]!].flat(), value] : value;
  }

  const ifNoneMatch = ifNoneMatchOf(req.headers);
  const deferred: DeferredRateLimit | undefined = ifNoneMatch ? {} : undefined;
  const caller = createRestCaller(deferred ? { ...ctx, deferredRateLimit: deferred } : ctx);
  const call = (input: RawInput) => operation(caller, input);
  // The body is encoded once: its entity tag and the response read the same bytes.
  if (!ifNoneMatch || !deferred) return answer(Buffer.from(JSON.stringify(await call(input))), responseHeaders);

  // A conditional GET: the query runs, and its answer decides what the request costs. A
  // 304 counts only against the conditional quota; anything else (a 200, or an error after
  // authentication) against the key's quota too, as an unconditional request would, so
  // the limit stays exact however requests interleave.
  let body: Buffer<ArrayBuffer>;
  try {
    body = Buffer.from(JSON.stringify(await call(input)));
  } catch (error) {
    // Nothing to charge when authentication itself failed.
    await deferred.charge?.();
    throw error;
  }
  const etag = weakEtag(body);
  if (matchesAny(ifNoneMatch, etag)) {
    await deferred.show?.();
    setRepresentationHeaders(responseHeaders, etag);
    return notModified(responseHeaders);
  }
  await deferred.charge?.();
  return answer(body, responseHeaders, etag);
}

/** The 200 of a JSON operation. */
function answer(body: Buffer<ArrayBuffer>, responseHeaders: Headers, etag = weakEtag(body)): Response {
  setRepresentationHeaders(responseHeaders, etag);
  return bytesResponse(body, 200, responseHeaders);
}

function setRepresentationHeaders(headers: Headers, etag: string): void {
  headers.set('Content-Type', 'application/json; charset=utf-8');
  headers.set('ETag', etag);
  headers.set('Cache-Control', 'private, no-cache');
  headers.set('Vary', 'X-API-Key, Authorization');
}
