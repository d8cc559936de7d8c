import { ifNoneMatchOf, matchesAny, notModified, weakEtag } from '@/server/http/conditional';
import { publicOriginOf } from '@/server/http/public-origin';
import { bytesResponse } from '@/server/http/responses';
import { openApiDocument } from './openapi-document';

/**
 * GET /api/v1/openapi.json: the document, public (no key needed to read what the API is).
 * Its server URL is the public origin: with AUTH_URL the same for everyone, so any cache
 * may keep it; without, taken from the request's Host, so only the client's own cache may
 * (a shared cache would hand one client's Host to everyone).
 */
export async function serveDocument(req: Request, responseHeaders: Headers): Promise<Response> {
  const { origin, fromRequest } = publicOriginOf(req.headers);
  responseHeaders.set('Cache-Control', fromRequest ? 'private, max-age=300' : 'public, max-age=300');
  responseHeaders.set('Access-Control-Allow-Origin', '*');
  responseHeaders.set('Content-Type', 'application/json; charset=utf-8');
  // Encoded once: the entity tag and the response read the same bytes.
  const body = Buffer.from(JSON.stringify(openApiDocument(origin)));
  responseHeaders.set('ETag', weakEtag(body));
  const ifNoneMatch = ifNoneMatchOf(req.headers);
  if (ifNoneMatch && matchesAny(ifNoneMatch, responseHeaders.get('ETag')!)) return notModified(responseHeaders);
  return bytesResponse(body, 200, responseHeaders);
}
