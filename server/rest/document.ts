import { ifNoneMatchOf, matchesAny, notModified, weakEtag } from '@/server/http/conditional';
import { publicOrigin } from '@/server/http/public-origin';
import { openApiDocument } from './openapi-document';

/** GET /api/v1/openapi.json: the document, public and cacheable (no key needed to read what the API is). */
export async function serveDocument(req: Request, responseHeaders: Headers): Promise<Response> {
  responseHeaders.set('Cache-Control', 'public, max-age=300');
  responseHeaders.set('Access-Control-Allow-Origin', '*');
  responseHeaders.set('Content-Type', 'application/json; charset=utf-8');
  const body = JSON.stringify(openApiDocument(publicOrigin(req.headers)));
  responseHeaders.set('ETag', weakEtag(body));
  const ifNoneMatch = ifNoneMatchOf(req.headers);
  if (ifNoneMatch && matchesAny(ifNoneMatch, responseHeaders.get('ETag')!)) return notModified(responseHeaders);
  return new Response(body, { status: 200, headers: responseHeaders });
}
