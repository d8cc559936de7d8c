import 'server-only';
import { enforceRateLimit } from '@/server/access/rate-limit';
import { sameSecret } from '@/server/access/shared-secret';
import { config } from '@/server/config';
import { AppError, toAppError } from '@/server/errors';
import { clientAddressOf } from '@/server/http/client-address';
import { apiHeaders, errorResponse, newRequestId } from '@/server/http/responses';
import { countFailedKeyAttempt, metricsEnabled } from '@/server/observability/metrics';
import { renderMetrics } from './metrics-scrape';

/**
 * GET /api/metrics: the Prometheus text of this process. Without METRICS_TOKEN (or with
 * OBSERVABILITY=off) the route does not exist: the same 404 as the app's other optional
 * route (the cron route without CRON_SECRET). With it, only `Authorization: Bearer
 * <METRICS_TOKEN>` is served; anything else is a 401 that counts against the client
 * address like a bad API key, so a flood of guesses meets the failed-attempt limit (429).
 * A correct token is served even from an address out of attempts: a scraper behind a
 * shared address must not be locked out by someone else's guesses, and a token of 32
 * characters or more is not found by guessing at 30 a minute.
 */
export async function handleMetricsRequest(req: Request): Promise<Response> {
  const requestId = newRequestId();
  const headers = apiHeaders(requestId);
  const token = config().metricsToken;
  if (!token || !metricsEnabled()) return errorResponse(new AppError('not_found', 'No such endpoint.'), requestId, headers);
  try {
    if (!sameSecret(bearerOf(req.headers), token)) {
      countFailedKeyAttempt('metrics_token');
      // Throws the 429 once the address is out of failed attempts.
      await enforceRateLimit({ setHeader: (name, value) => headers.set(name, value) }, 'auth_failure', clientAddressOf(req.headers), { headers: false });
      headers.set('WWW-Authenticate', 'Bearer realm="metrics"');
      return errorResponse(new AppError('unauthorized', 'Missing or invalid metrics token. Send it as Authorization: Bearer <METRICS_TOKEN>.'), requestId, headers);
    }
    const { contentType, text } = await renderMetrics();
    headers.set('Content-Type', contentType);
    return new Response(text, { status: 200, headers });
  } catch (error) {
    return errorResponse(toAppError(error, requestId), requestId, headers);
  }
}

/** The token of `Authorization: Bearer <token>` (the scheme in any case, RFC 9110 11.1), or "". */
function bearerOf(headers: Headers): string {
  return /^bearer +(.+)$/i.exec(headers.get('authorization')?.trim() ?? '')?.[1]?.trim() ?? '';
}
