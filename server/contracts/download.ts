import 'server-only';
import { PAGING_PARAMS, requestHref, type SearchParams } from '@/lib/contract-list-url';
import { enforceRateLimit } from '@/server/access/rate-limit';
import { loadScope } from '@/server/access/scope';
import type { SessionUser } from '@/server/auth/session';
import { config } from '@/server/config';
import { getDb, getReadDb } from '@/server/database';
import { AppError, toAppError } from '@/server/errors';
import { withinDeadline } from '@/server/http/deadline';
import { htmlMessageResponse } from '@/server/http/html-message';
import { apiHeaders, newRequestId } from '@/server/http/responses';
import { isCrossSiteNavigation } from '@/server/http/same-origin';
import { traceRoute } from '@/server/observability/tracing';
import { setRequestErrorCode } from '@/server/observability/request';
import { csvExportResponse } from './csv-export';
import { parseListParams } from './list-params';
import { toContractFilters, toSort } from './query';

/**
 * GET /contracts/export?<the list's parameters>: the contracts page's "Download CSV", for
 * the signed-in user, without an API key. The file is the API's export of the same list:
 * the page's parameters validated as the page validates them (the API's schema and
 * membership rule), every matching contract in the page's order, the same columns, the
 * same streaming. It counts against an export quota of its own per user, as large as a
 * key's (RATE_LIMIT_EXPORT_*), and waits at most REQUEST_DEADLINE_MS for its first page.
 *
 * A browser navigates here, so every answer that is not the file is one a person can
 * read: a redirect to the list (started by another site; a refused parameter, which the
 * list explains), to sign-in (coming back to the list), or a short HTML page (the limit,
 * an unavailable database). The file starts with a UTF-8 byte order mark, because a file
 * downloaded from a browser is usually opened in Excel, which needs it to read accents.
 */
export function serveContractsDownload(req: Request, user: SessionUser | undefined): Promise<Response> {
  return traceRoute(req, '/contracts/export', (traced) => serveDownload(traced, user));
}

async function serveDownload(req: Request, user: SessionUser | undefined): Promise<Response> {
  const requestId = newRequestId();
  const headers = apiHeaders(requestId);
  const params = searchParamsOf(new URL(req.url));
  const listHref = requestHref(params);
  // Nothing is read or counted for a navigation another site started: it lands on the list.
  if (isCrossSiteNavigation(req)) return seeOther(listHref, headers);
  if (!user) return seeOther(`/sign-in?callbackUrl=${encodeURIComponent(listHref)}`, headers);

  const failure = (error: AppError) => {
    // As the API's 503: worth retrying in a few seconds.
    if (error.code === 'service_unavailable') headers.set('Retry-After', '5');
    setRequestErrorCode(error.code);
    return htmlMessageResponse(messageOf(error, headers, listHref, requestId), headers);
  };
  return withinDeadline(
    async () => {
      try {
        // Memberships on the primary, as for the page: a removed one is gone at once.
        const { scope } = await loadScope(await getDb(), user.id);
        const { input, errors } = parseListParams(withoutPaging(params), scope);
        if (errors.length > 0) return seeOther(listHref, headers);
        await enforceRateLimit({ setHeader: (name, value) => headers.set(name, value) }, 'export', `user:${user.id}`);
        return await csvExportResponse(
          await getReadDb(),
          scope,
          { filters: toContractFilters(input), sort: toSort(input.sort), bom: true },
          requestId,
          headers,
        );
      } catch (error) {
        return failure(toAppError(error, requestId));
      }
    },
    requestId,
    undefined,
    failure,
  );
}

/** The query as the pages receive it: a parameter given twice is an array (which validation refuses). */
function searchParamsOf(url: URL): SearchParams {
  const params: Record<string, string | string[]> = {};
  for (const name of new Set(url.searchParams.keys())) {
    const values = url.searchParams.getAll(name);
    params[name] = values.length === 1 ? values[0]! : values;
  }
  return params;
}

/** Every matching contract is in the file: the list's page parameters neither apply nor fail. */
function withoutPaging(params: SearchParams): SearchParams {
  return Object.fromEntries(Object.entries(params).filter(([name]) => !(PAGING_PARAMS as readonly string[]).includes(name)));
}

/** A redirect to a path of this site; relative, so that no Host header ever chooses where. */
function seeOther(path: string, headers: Headers): Response {
  const h = new Headers(headers);
  h.set('Location', path);
  return new Response(null, { status: 303, headers: h });
}

function messageOf(error: AppError, headers: Headers, listHref: string, requestId: string) {
  const back = { href: listHref, label: 'Back to the contracts' };
  if (error.code === 'rate_limited') {
    const { limit, windowSeconds } = config().rateLimit.export;
    return {
      status: error.status,
      title: 'Download limit reached',
      message: `The contracts can be downloaded ${limit} times per ${describeWindow(windowSeconds)}. Try again in ${describeSeconds(Number(headers.get('Retry-After') ?? '60'))}.`,
      back,
      requestId,
    };
  }
  return { status: error.status, title: 'The download could not start', message: error.message, back, requestId };
}

/** "hour", "minute", or "3 hours" for a window of another length. */
export function describeWindow(seconds: number): string {
  return seconds === 3600 ? 'hour' : seconds === 60 ? 'minute' : seconds === 86_400 ? 'day' : describeSeconds(seconds);
}

/** "45 seconds", "1 minute", "12 minutes", "1 hour", "2 hours". */
function describeSeconds(seconds: number): string {
  const plural = (n: number, unit: string) => `${n} ${unit}${n === 1 ? '' : 's'}`;
  if (seconds < 60) return plural(Math.max(1, Math.round(seconds)), 'second');
  if (seconds < 3600) return plural(Math.ceil(seconds / 60), 'minute');
  return plural(Math.ceil(seconds / 3600), 'hour');
}
