import { AppError } from '@/server/errors';
import { consumeRateLimit, rateLimitHeaders, type RateLimitBucket } from '@/server/rate-limit';
import type { RequestContext } from '@/server/trpc/init';

/**
 * The one place where a request meets its rate limit: consumes one request of the bucket,
 * sets the rate-limit headers (on success and on 429 alike) and throws `rate_limited`
 * when the bucket is empty.
 */
export async function enforceRateLimit(
  ctx: Pick<RequestContext, 'setHeader'>,
  bucket: RateLimitBucket,
  identifier: string,
  options: { headers?: boolean } = {},
): Promise<void> {
  const result = await consumeRateLimit(bucket, identifier);
  const headers = rateLimitHeaders(result, Date.now(), bucket);
  // When the store is unreachable the request is served without a limit (fail open);
  // its counts are unknown then, so no invented rate-limit headers are sent.
  if ((options.headers !== false && !result.degraded) || !result.allowed) {
    for (const [name, value] of Object.entries(headers)) ctx.setHeader(name, value);
  }
  if (!result.allowed) {
    throw new AppError(
      'rate_limited',
      bucket === 'auth_failure'
        ? 'Too many requests with invalid API keys from this address. Retry later.'
        : bucket === 'calendar'
          ? `This calendar feed was read more than ${result.limit} times in the last hour. Retry after ${headers['Retry-After']} seconds.`
          : `Rate limit exceeded: ${result.limit} requests per ${describeWindow(result.windowSeconds)}. Retry after ${headers['Retry-After']} seconds.`,
    );
  }
}

function describeWindow(seconds: number): string {
  if (seconds === 60) return 'minute';
  if (seconds === 3600) return 'hour';
  return `${seconds} seconds`;
}
