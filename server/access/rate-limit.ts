import { AppError } from '@/server/errors';
import type { RequestContext } from '@/server/http/context';
import { countRateLimitRefusal } from '@/server/observability/metrics';
import { inSpan } from '@/server/observability/tracing';
import { consumeRateLimit, peekRateLimit, rateLimitHeaders, type RateLimitBucket } from '@/server/rate-limit';

/**
 * The one place where a request meets its rate limit: consumes one request of the bucket,
 * sets the rate-limit headers (on success and on 429 alike, unless `headers: false`) and
 * throws `rate_limited` when the bucket is empty.
 */
export async function enforceRateLimit(
  ctx: Pick<RequestContext, 'setHeader'>,
  bucket: RateLimitBucket,
  identifier: string,
  options: { headers?: boolean } = {},
): Promise<void> {
  // The span names the bucket and the outcome, never the identifier (a client address, a key's id).
  const result = await inSpan('rate_limit consume', async (span) => {
    const consumed = await consumeRateLimit(bucket, identifier);
    span?.setAttributes({
      'app.rate_limit.bucket': bucket,
      'app.rate_limit.allowed': consumed.allowed,
      'app.rate_limit.remaining': consumed.remaining,
      'app.rate_limit.degraded': Boolean(consumed.degraded),
    });
    return consumed;
  });
  const headers = rateLimitHeaders(result, Date.now(), bucket);
  // When the store is unreachable the request is served without a limit (fail open);
  // its counts are unknown then, so no invented rate-limit headers are sent.
  if ((options.headers !== false && !result.degraded) || !result.allowed) {
    for (const [name, value] of Object.entries(headers)) ctx.setHeader(name, value);
  }
  if (!result.allowed) {
    countRateLimitRefusal(bucket);
    throw new AppError('rate_limited', limitMessage(bucket, result.limit, result.windowSeconds, headers['Retry-After']!));
  }
}

/**
 * Sets the rate-limit headers of `bucket` without consuming a request: for an answer that
 * does not count (a 304), which still tells the client where it stands, as GitHub's do.
 */
export async function showRateLimit(ctx: Pick<RequestContext, 'setHeader'>, bucket: RateLimitBucket, identifier: string): Promise<void> {
  const state = await inSpan('rate_limit peek', async (span) => {
    span?.setAttribute('app.rate_limit.bucket', bucket);
    return peekRateLimit(bucket, identifier);
  });
  if (state.degraded) return;
  // Not a denial, so no Retry-After, even with nothing left.
  for (const [name, value] of Object.entries(rateLimitHeaders({ ...state, allowed: true }, Date.now(), bucket))) ctx.setHeader(name, value);
}

function limitMessage(bucket: RateLimitBucket, limit: number, windowSeconds: number, retryAfter: string): string {
  switch (bucket) {
    case 'auth_failure':
      return 'Too many requests with invalid API keys from this address. Retry later.';
    case 'sign_in_address':
    case 'sign_in_account':
      return `Too many failed sign-in attempts. Try again in ${retryAfter} seconds.`;
    case 'webhook_manual':
      return `You sent ${limit} test events and resends in the last hour, the most allowed. Retry after ${retryAfter} seconds.`;
    case 'conditional':
      return `Too many conditional requests: ${limit} per ${describeWindow(windowSeconds)} (answers 304 do not count against the general limit, but against this one). Retry after ${retryAfter} seconds.`;
    case 'calendar':
      return `This calendar feed was read more than ${limit} times in the last hour. Retry after ${retryAfter} seconds.`;
    default:
      return `Rate limit exceeded: ${limit} requests per ${describeWindow(windowSeconds)}. Retry after ${retryAfter} seconds.`;
  }
}

function describeWindow(seconds: number): string {
  if (seconds === 60) return 'minute';
  if (seconds === 3600) return 'hour';
  return `${seconds} seconds`;
}
