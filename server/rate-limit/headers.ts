import type { RateLimitResult } from './types';

/**
 * Response headers for a rate-limit result.
 *
 * - X-RateLimit-Limit / -Remaining / -Reset: the de-facto headers the spec asks for;
 *   Reset is the limiter's reset as Unix seconds, rounded up so that a client waiting
 *   until then never comes back early.
 * - RateLimit-Policy and RateLimit in the syntax of draft-ietf-httpapi-ratelimit-headers-11
 *   (May 2026; same syntax since -08): Structured Field lists of items named after the
 *   policy, e.g. `RateLimit-Policy: "general";q=60;w=60` and
 *   `RateLimit: "general";r=12;t=37`, where r is the remaining quota and t the seconds
 *   until the reset.
 * - Retry-After on denials: whole seconds until the reset, at least 1. The draft asks
 *   that it not point earlier than the end of the effective window, so it equals t.
 *
 * `policyName` defaults to "default"; pass the bucket to tell policies apart.
 */
export function rateLimitHeaders(
  result: RateLimitResult,
  now: number = Date.now(),
  policyName = 'default',
): Record<string, string> {
  const secondsToReset = Math.max(0, Math.ceil((result.resetMs - now) / 1000));
  const remaining = Math.max(0, Math.floor(result.remaining));
  const name = sfString(policyName);
  const headers: Record<string, string> = {
    'X-RateLimit-Limit': String(result.limit),
    'X-RateLimit-Remaining': String(remaining),
    'X-RateLimit-Reset': String(Math.ceil(result.resetMs / 1000)),
    'RateLimit-Policy': `${name};q=${result.limit};w=${result.windowSeconds}`,
    RateLimit: `${name};r=${remaining};t=${secondsToReset}`,
  };
  if (!result.allowed) headers['Retry-After'] = String(Math.max(1, secondsToReset));
  return headers;
}

/** A Structured Field String (RFC 9651 section 3.3.3): quoted, with \ and " escaped. */
function sfString(value: string): string {
  return `"${value.replace(/[^\x20-\x7e]/g, '').replace(/[\\"]/g, (c) => `\\${c}`)}"`;
}
