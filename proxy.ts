/**
 * Next.js 16's proxy (the former middleware), for one job: a POST to a page (a server
 * action: sign-in, sign-up, sign-out) that declares a body over 100 KiB is answered 413
 * before the action decodes it. Server actions run inside Next.js, before any code of
 * the app, and Next.js answers its own `serverActions.bodySizeLimit` with a 500.
 *
 * The matcher does the work, so that no other request runs through here (Next.js clones
 * the body of every request a proxy sees): only paths outside /api/ (the API routes cap
 * their own bodies, server/http/body.ts) with a Content-Length above 102400. A chunked
 * body without Content-Length is cut at the same size by `serverActions.bodySizeLimit`
 * (next.config.mjs). docs/security.md, "Request bodies".
 */
import { NextResponse } from 'next/server';

export function proxy(): NextResponse {
  return NextResponse.json(
    { error: { message: 'The request body is larger than 102400 bytes.' } },
    { status: 413, headers: { 'Cache-Control': 'no-store', Connection: 'close' } },
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
  ],
};
