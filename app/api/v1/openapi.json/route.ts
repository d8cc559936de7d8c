import { openApiDocument } from '@/server/rest/openapi-document';
import { publicOrigin } from '@/server/rest/public-origin';

export const dynamic = 'force-dynamic';

export function GET(req: Request) {
  return Response.json(openApiDocument(publicOrigin(req.headers)), {
    headers: { 'Cache-Control': 'public, max-age=300', 'Access-Control-Allow-Origin': '*' },
  });
}
