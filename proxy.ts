/**
 * Next.js 16's proxy (the former middleware), for one job: a POST to a page (a server
 * action: sign-in, sign-up, sign-out) whose body could be over 100 KiB is refused before
 * the action decodes it. Server actions run inside Next.js, before any code of the app,
 * and Next.js answers its own `serverActions.bodySizeLimit` with a 500.
 *
 * The matcher does the work, so that no other request runs through here (Next.js clones
 * the body of every request a proxy sees), and only paths outside /api/ (the API routes
 * cap their own bodies, server/http/body.ts):
 *
 * - a Content-Length above 102400: 413 Payload Too Large;
 * - a body of unknown length (Transfer-Encoding, chunked, and no Content-Length): 411
 *   Length Required. Browsers always declare the length of a form post or a server
 *   action's fetch, so only other clients send such a body, and 411 tells them the one
 *   thing to change (413 would claim a size nobody has measured).
 *
 * docs/security.md, row 11a.
 */
import { NextResponse, type NextRequest } from 'next/server';

const HEADERS = { 'Cache-Control': 'no-store', Connection: 'close' };

export function proxy(request: NextRequest): NextResponse {
  if (request.headers.get('content-length') === null) {
    return NextResponse.json(
      { error: { message: 'A request body needs a Content-Length header.' } },
      { status: 411, headers: HEADERS },
    );
  }
  return NextResponse.json(
    { error: { message: 'The request body is larger than 102400 bytes.' } },
    { status: 413, headers: HEADERS },
  );
}

export const config = {
  matcher: [
    {
      source: '/((?!api/).*)',
      // A decimal number above 102400, INTERNAL_BODY_LIMIT of server/http/body.ts (a static
      // literal: Next.js reads the matcher at build time; tests/server/body-limit.test.ts
      // holds the two together).
      has: [{ type: 'header', key: 'content-length', value: '0*(?:[1-9]\\d{6,}|[2-9]\\d{5}|1[1-9]\\d{4}|10[3-9]\\d{3}|102[5-9]\\d{2}|1024[1-9]\\d|10240[1-9])' }],
    },
    {
      source: '/((?!api/).*)',
      // Any Transfer-Encoding and no Content-Length: a body whose length nobody declared
      // (Node's parser refuses a request with both headers with a 400 before Next.js).
      has: [{ type: 'header', key: 'transfer-encoding' }],
      missing: [{ type: 'header', key: 'content-length' }],
    },
  ],
};
