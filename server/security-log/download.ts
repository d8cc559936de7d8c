import 'server-only';
import type { SessionUser } from '@/server/auth/session';
import { getDb } from '@/server/database';
import { AppError, toAppError } from '@/server/errors';
import { htmlMessageResponse } from '@/server/http/html-message';
import { apiHeaders, newRequestId } from '@/server/http/responses';
import { isCrossSiteNavigation } from '@/server/http/same-origin';
import { setRequestErrorCode } from '@/server/observability/request';
import type { SecurityLogOwner } from '@/db/queries/security-events';
import { assertOrganizationAdmin } from '@/server/access/keys';
import { securityLogCsv } from './service';

/** Which log a download is of, and the page it belongs to. */
interface DownloadedLog {
  /** The page with the log (where a cross-site navigation or a bad filter goes back to). */
  path: string;
  /** Whose events the signed-in person downloads (throws when they may not). */
  owner(user: SessionUser): Promise<SecurityLogOwner>;
}

/** Settings → Security log: the person's own events. */
export const ownLog: DownloadedLog = { path: '/settings/security-log', owner: async (user) => ({ userId: user.id }) };

/** An organisation's page: its log, for its owners and admins; anyone else gets the same 404 as for an unknown id. */
export function organizationLog(organizationId: string): DownloadedLog {
  return {
    path: `/settings/organizations/${encodeURIComponent(organizationId)}`,
    async owner(user) {
      const notFound = new AppError('not_found', 'No such organisation, or you are not one of its owners or admins.');
      if (!UUID.test(organizationId)) throw notFound;
      try {
        await assertOrganizationAdmin(await getDb(), user.id, organizationId);
      } catch (error) {
        // Only the refusal reads as "no such organisation"; a database failure stays one.
        throw error instanceof AppError && error.code === 'forbidden' ? notFound : error;
      }
      return { organizationId };
    },
  };
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * GET …/export?kind=…&from=…&to=…: a security log's "Download CSV" (the person's own, or
 * an organisation's), its events as the page filters them (at most 10,000, newest first),
 * formula-safe like the contracts export. A browser navigates here: a bad filter is a
 * short HTML page with a 400, another site's navigation lands on the log.
 */
export async function serveSecurityLogDownload(req: Request, user: SessionUser | undefined, log: DownloadedLog): Promise<Response> {
  const requestId = newRequestId();
  const headers = apiHeaders(requestId);
  if (isCrossSiteNavigation(req)) return seeOther(log.path, headers);
  if (!user) return seeOther(`/sign-in?callbackUrl=${encodeURIComponent(log.path)}`, headers);
  const url = new URL(req.url);
  try {
    const csv = await securityLogCsv(await getDb(), await log.owner(user), {
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
      {
        status: appError.status,
        title: appError.status === 400 ? 'This filter cannot be used' : 'The log could not be downloaded',
        message: appError.message,
        back: appError.status === 404 ? { href: '/settings/api-keys', label: 'Back to Settings' } : { href: log.path, label: 'Back to the security log' },
        requestId,
      },
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
