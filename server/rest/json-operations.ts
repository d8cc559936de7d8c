import { ifNoneMatchOf, matchesAny, notModified, weakEtag } from '@/server/http/conditional';
import type { DeferredRateLimit, RequestContext } from '@/server/http/context';
import { bytesResponse } from '@/server/http/responses';
import { createCallerFactory } from '@/server/trpc/init';
import { restRouter } from '@/server/trpc/root';
import { buildOpenApiDocument } from './openapi-document';

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
 * procedure added to restRouter without an entry here is refused as a server error by
 * serveJsonOperation below, which every API test of the new operation shows at once.
 */
const CALLS: Record<string, (caller: RestCaller, input: RawInput) => Promise<unknown>> = {
  listContracts: (caller, input) => caller.contracts.list(input as never),
  getContract: (caller, input) => caller.contracts.get(input as never),
};

interface Operation {
  method: string;
  /** The path below /api/v1 with its {parameters} as named groups. */
  pattern: RegExp;
  call: (caller: RestCaller, input: RawInput) => Promise<unknown>;
}

/** The document's operations that a procedure serves, in the document's order. */
function operationsOf(): Operation[] {
  const paths = buildOpenApiDocument('').paths as Record<string, Record<string, { operationId?: string }>>;
  return Object.entries(paths).flatMap(([path, item]) =>
    Object.entries(item).flatMap(([method, operation]) => {
      const call = operation.operationId === undefined ? undefined : CALLS[operation.operationId];
      if (!call) return [];
      const source = path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\\?\{([^}]+)\\?\}/g, '(?<$1>[^/]+)');
      return [{ method: method.toUpperCase(), pattern: new RegExp(`^${source}/?$`), call }];
    }),
  );
}

let operations: Operation[] | undefined;

export async function serveJsonOperation(req: Request, ctx: RequestContext, responseHeaders: Headers): Promise<Response> {
  operations ??= operationsOf();
  const url = new URL(req.url);
  const path = url.pathname.replace(/^\/api\/v1/, '');
  let match: RegExpExecArray | null = null;
  const operation = operations.find((op) => op.method === req.method && (match = op.pattern.exec(path)) !== null);
  // The router only sends documented paths and methods here.
  if (!operation || !match) throw new Error(`no JSON operation for ${req.method} ${path}`);

  const input: RawInput = {};
  for (const name of new Set(url.searchParams.keys())) {
    const values = url.searchParams.getAll(name);
    input[name] = values.length === 1 ? values[0]! : values;
  }
  for (const [name, value] of Object.entries((match as RegExpExecArray).groups ?? {})) {
    // A query parameter named like a path parameter is refused as given twice, rather than
    // silently overwritten (trpc-to-openapi's adapter would overwrite it).
    input[name] = name in input ? [...[input[name]!].flat(), value] : value;
  }

  const ifNoneMatch = ifNoneMatchOf(req.headers);
  const deferred: DeferredRateLimit | undefined = ifNoneMatch ? {} : undefined;
  const caller = createRestCaller(deferred ? { ...ctx, deferredRateLimit: deferred } : ctx);
  const call = (input: RawInput) => operation.call(caller, input);
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
