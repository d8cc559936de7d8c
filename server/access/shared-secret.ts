import 'server-only';
import { createHash, timingSafeEqual } from 'node:crypto';

/**
 * Whether a presented secret equals a configured one (CRON_SECRET, METRICS_TOKEN), in
 * constant time: the SHA-256 digests are compared, so the lengths match and leak nothing.
 */
export function sameSecret(presented: string, expected: string): boolean {
  const digest = (text: string) => new Uint8Array(createHash('sha256').update(text).digest());
  return timingSafeEqual(digest(presented), digest(expected));
}
