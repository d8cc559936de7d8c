import 'server-only';
import type { SessionUser } from '@/server/auth/session';
import { getDb } from '@/server/database';
import { AppError, toAppError } from '@/server/errors';
import { htmlMessageResponse } from '@/server/http/html-message';
import { apiHeaders, newRequestId } from '@/server/http/responses';
import { isCrossSiteNavigation } from '@/server/http/same-origin';
import { setRequestErrorCode } from '@/server/observability/request';
import { securityLogCsv } from './service';

const LOG_PATH = '/settings/security-log';

/**
 * GET /settings/security-log/export?kind=…&from=…&to=…: Settings → Security log's
 * "Download CSV", the signed-in person's own events as the page filters them (at most
 * 10,000, newest first), formula-safe like the contracts export. A browser navigates here:
 * a bad filter is a short HTML page with a 400, another site's navigation lands on the log.
 */
export async function serveSecurityLogDownload(req: Request, user: SessionUser | undefined): Promise<Response> {
  const requestId = newRequestId();
  const headers = apiHeaders(requestId);
  if (isCrossSiteNavigation(req)) return seeOther(LOG_PATH, headers);
  if (!user) return seeOther(`/sign-in?callbackUrl=${encodeURIComponent(LOG_PATH)}`, headers);
  const url = new URL(req.url);
  try {
    const csv = await securityLogCsv(await getDb(), { userId: user.id }, {
      kinds: url.searchParams.getAll('kind'),
      from: single(url, 'from'),
      to: single(url, 'to'),
    });
    headers.set('Content-Type', 'text/csv; charset=utf-8');
    headers.set('Content-Disposition', `attachment; filename="security-log-${new Date().toISOString().slice(0, 10)}.csv"`);
    headers.set('Cache-Control', 'no-store');
    // The byte order mark: Excel then reads accents right.
    return new Response(`\uFEFF${csv}`, { status: 200, headers });
  } catch (error) {
    const appError = toAppError(error, requestId);
    setRequestErrorCode(appError.code);
    return htmlMessageResponse(
      { status: appError.status, title: appError.status === 400 ? 'This filter cannot be used' : 'The log could not be downloaded', message: appError.message, back: { href: LOG_PATH, label: 'Back to the security log' }, requestId },
      headers,
    );
  }
}

function single(url: URL, name: string): string | undefined {
  const values = url.searchParams.getAll(name);
  if (values.length > 1) throw new AppError('invalid_request', `${name} was given twice.`, [{ param: name, message: 'Given twice.' }]);
  return values[0];
}

function seeOther(path: string, headers: Headers): Response {
  const h = new Headers(headers);
  h.set('Location', path);
  return new Response(null, { status: 303, headers: h });
}
