import { openApiDocument } from '@/server/rest/openapi-document';

export const dynamic = 'force-dynamic';

export function GET(req: Request) {
  const origin = new URL(req.url).origin;
  return Response.json(openApiDocument(origin), {
    headers: { 'Cache-Control': 'public, max-age=300', 'Access-Control-Allow-Origin': '*' },
  });
}
