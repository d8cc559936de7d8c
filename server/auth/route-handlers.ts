import 'server-only';
import { NextRequest } from 'next/server';
import { readBoundedBody } from '@/server/http/body';
import { publicOriginOf } from '@/server/http/public-origin';
import { routeHandlers } from './next-auth';

/**
 * next-auth's route handlers (/api/auth/*, with the sign-in limit of next-auth.ts's
 * routeHandlers) behind two guards:
 * - the body is read here, at most 100 KiB (a larger one is a 413 before it is read in
 *   full); next-auth would otherwise buffer whatever it is sent;
 * - X-Forwarded-Host and X-Forwarded-Proto are replaced by the public origin the app
 *   decided on (server/http/public-origin.ts), so that next-auth never builds a URL from
 *   a forwarded host that no trusted proxy wrote.
 */
async function guarded(req: NextRequest, handler: (req: NextRequest) => Promise<Response>): Promise<Response> {
  const body = await readBoundedBody(req);
  if (body instanceof Response) return body;
  const headers = new Headers(req.headers);
  try {
    const origin = new URL(publicOriginOf(req.headers).origin);
    headers.set('x-forwarded-host', origin.host);
    headers.set('x-forwarded-proto', origin.protocol.slice(0, -1));
  } catch {
    headers.delete('x-forwarded-host');
  }
  return handler(new NextRequest(req.url, { method: req.method, headers, body: body as BodyInit | undefined, signal: req.signal }));
}

export const GET = (req: NextRequest) => guarded(req, routeHandlers.GET);
export const POST = (req: NextRequest) => guarded(req, routeHandlers.POST);
