import type { AnyProcedure } from '@trpc/server';
import type { OpenApiMeta } from 'trpc-to-openapi';
import { ifNoneMatchOf, matchesAny, notModified, weakEtag } from '@/server/http/conditional';
import type { DeferredRateLimit, RequestContext } from '@/server/http/context';
import { bytesResponse } from '@/server/http/responses';
import { restRouter } from '@/server/trpc/root';

/**
 * The REST API's JSON operations (list, get one): the procedures of `restRouter` that
 * carry OpenAPI metadata, called through tRPC's own caller with their input read as
 * trpc-to-openapi reads it (query parameters, a repeated one as an array, then the path
 * parameters). trpc-to-openapi writes the document; its runtime is not used, because its
 * fetch adapter builds a new handler on every request (and, outside production,
 * regenerates the whole document each time). tests/api/openapi-adapter.test.ts holds this
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

interface Operation {
  method: string;
  /** The path below /api/v1 with its {parameters} as named groups. */
  pattern: RegExp;
  /** The procedure's path in the router ("contracts.list"). */
  path: string;
  procedure: AnyProcedure;
}

function operationsOf(): Operation[] {
  const procedures = restRouter._def.procedures as unknown as Record<string, AnyProcedure>;
  return Object.entries(procedures).flatMap(([procedure, definition]) => {
    const openapi = (definition._def.meta as OpenApiMeta | undefined)?.openapi;
    if (!openapi) return [];
    const source = openapi.path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\\?\{([^}]+)\\?\}/g, '(?<$1>[^/]+)');
    return [{ method: openapi.method, pattern: new RegExp(`^${source}/?$`), path: procedure, procedure: definition }];
  });
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

  const input: Record<string, string | string[]> = {};
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
  const callerCtx = deferred ? { ...ctx, deferredRateLimit: deferred } : ctx;
  // What tRPC's caller (`restRouter.createCaller(ctx).contracts.list(input)`) does, without
  // building its proxy of the router, one proxy per property read, on every request: the
  // procedure called with the context and the input, its middleware chain, input and
  // output validation as before, and its failure thrown as it is (the caller rethrows it
  // unchanged too).
  const { procedure, path: procedurePath } = operation;
  const call = (input: unknown) =>
    procedure({ path: procedurePath, getRawInput: async () => input, ctx: callerCtx, type: procedure._def.type, signal: undefined, batchIndex: 0 }) as Promise<unknown>;
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
