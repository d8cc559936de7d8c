import type { FetchFunction } from './retry.js';

/**
 * Conditional GETs: the API sends an ETag with every list, contract, calendar feed and
 * document, answers `If-None-Match` with 304 while nothing changed, and does not count a
 * 304 against the key's rate limit. This fetch remembers the last answer of each GET URL
 * (per API key) and sends its ETag back; a 304 is handed to the caller as the remembered
 * 200, with the 304's fresh headers (rate limit, request id). A program that polls the
 * API then spends its quota only on answers that changed.
 */

interface Remembered {
  etag: string;
  status: number;
  headers: [string, string][];
  body: ArrayBuffer;
}

export interface RevalidationOptions {
  /** How many answers are remembered (least recently used first out). Default 500. */
  maxEntries?: number;
}

/** Wraps `fetchFn` with an ETag cache of the last `maxEntries` GET answers. */
export function revalidateWithETags(fetchFn: FetchFunction, options: RevalidationOptions = {}): FetchFunction {
  const maxEntries = options.maxEntries ?? 500;
  const cache = new Map<string, Remembered>();
  return async (request) => {
    if (request.method !== 'GET' || request.headers.has('if-none-match')) return fetchFn(request);
    // Answers differ by key: the key is part of the entry's name (kept in memory only).
    const key = `${request.headers.get('x-api-key') ?? request.headers.get('authorization') ?? ''} ${request.url}`;
    const remembered = cache.get(key);
    const sent = remembered ? withHeader(request, 'If-None-Match', remembered.etag) : request;
    const response = await fetchFn(sent);
    if (response.status === 304 && remembered) {
      cache.delete(key);
      cache.set(key, remembered);
      const headers = new Headers(remembered.headers);
      response.headers.forEach((value, name) => headers.set(name, value));
      return new Response(remembered.body.slice(0), { status: remembered.status, headers });
    }
    const etag = response.headers.get('etag');
    if (response.status === 200 && etag) {
      const body = await response.clone().arrayBuffer();
      cache.delete(key);
      const headers: [string, string][] = [];
      response.headers.forEach((value, name) => headers.push([name, value]));
      cache.set(key, { etag, status: response.status, headers, body });
      if (cache.size > maxEntries) cache.delete(cache.keys().next().value!);
    }
    return response;
  };
}

function withHeader(request: Request, name: string, value: string): Request {
  const headers = new Headers(request.headers);
  headers.set(name, value);
  return new Request(request, { headers });
}
