import { AppError } from '@/server/errors';
import { openApiDocument } from './openapi-document';
import { baseApiHeaders } from './openapi-handler';
import { publicOrigin } from './public-origin';
import { errorResponse, newRequestId } from './responses';

/**
 * GET /api/v1/openapi.json: the document, public and cacheable (no key needed to read
 * what the API is). Any other method gets the API's JSON 405, like every other path.
 */
export async function handleOpenApiDocumentRequest(req: Request): Promise<Response> {
  const requestId = newRequestId();
  const headers = baseApiHeaders(requestId);
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    headers.set('Allow', 'GET, HEAD');
    return errorResponse(new AppError('method_not_allowed', `${req.method} is not allowed here; use GET.`), requestId, headers);
  }
  headers.set('Cache-Control', 'public, max-age=300');
  headers.set('Access-Control-Allow-Origin', '*');
  headers.set('Content-Type', 'application/json; charset=utf-8');
  const body = req.method === 'HEAD' ? null : JSON.stringify(openApiDocument(publicOrigin(req.headers)));
  return new Response(body, { status: 200, headers });
}
