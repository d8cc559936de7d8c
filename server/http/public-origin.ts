import 'server-only';
import { AppError } from '@/server/errors';

/**
 * The origin clients use to reach this deployment, from the headers the nearest proxy
 * sets (Next.js fills X-Forwarded-Host and X-Forwarded-Proto when no proxy did): under
 * `next start`, `request.url` always says localhost.
 */
export function publicOrigin(headers: Headers): string {
  const host = headers.get('x-forwarded-host')?.split(',')[0]?.trim() || headers.get('host') || 'localhost:3000';
  const forwardedProto = headers.get('x-forwarded-proto')?.split(',')[0]?.trim();
  const proto = forwardedProto === 'http' || forwardedProto === 'https' ? forwardedProto : 'https';
  return `${proto}://${host}`;
}

/**
 * The public origin for an address the app hands out (a calendar feed's). Header values
 * are the client's word, so one that does not make a URL is refused rather than written
 * into a link.
 */
export function validatedPublicOrigin(headers: Headers): string {
  try {
    return new URL(publicOrigin(headers)).origin;
  } catch {
    throw new AppError('invalid_request', 'The request does not name a valid host, so no address can be written.');
  }
}
