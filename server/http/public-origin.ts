import 'server-only';
import { config, type Config } from '@/server/config';
import { AppError } from '@/server/errors';

/**
 * The origin clients use to reach this deployment, for every absolute URL the app writes
 * (the OpenAPI document's server and code samples, Link headers, calendar feed addresses
 * and their events' links).
 *
 * - `AUTH_URL` set: its origin, always. Nothing a client sends changes it.
 * - Otherwise behind a trusted proxy (`TRUSTED_PROXY_HOPS`, `CLIENT_ADDRESS_HEADER`, or
 *   Vercel): the host the proxy forwards in X-Forwarded-Host (the entry the outermost
 *   trusted proxy wrote, counted from the end like X-Forwarded-For) and its scheme.
 * - Otherwise the Host header. X-Forwarded-Host is then the client's own word (`next
 *   start` passes it on as sent) and does not count.
 *
 * Without `AUTH_URL` the result depends on the request's headers: `fromRequest` says so,
 * and such a response must not be kept by a shared cache (the document is then
 * `private`), or one client's Host would be served to everyone.
 */
export interface PublicOrigin {
  origin: string;
  fromRequest: boolean;
}

export function publicOriginOf(headers: Headers, c: Pick<Config, 'publicUrl' | 'clientAddress'> = config()): PublicOrigin {
  if (c.publicUrl) return { origin: c.publicUrl, fromRequest: false };
  const trustedHops = c.clientAddress.from === 'x-forwarded-for' ? c.clientAddress.hops : c.clientAddress.from === 'header' ? 1 : 0;
  const forwardedHost = trustedHops > 0 ? entryFromEnd(headers.get('x-forwarded-host'), trustedHops) : undefined;
  const host = forwardedHost || headers.get('host')?.trim() || 'localhost:3000';
  // The scheme: a trusted proxy's word, else what `next start` fills in from its socket
  // (a client can at most flip http/https of its own, uncacheable, answer).
  const forwardedProto = entryFromEnd(headers.get('x-forwarded-proto'), Math.max(trustedHops, 1));
  const proto = forwardedProto === 'http' || forwardedProto === 'https' ? forwardedProto : 'https';
  return { origin: `${proto}://${host}`, fromRequest: true };
}

export function publicOrigin(headers: Headers): string {
  return publicOriginOf(headers).origin;
}

/**
 * The entry `hops` places from the end of a list header, each proxy having appended its
 * own; a proxy that overwrites the header leaves one entry, which is then the one.
 */
function entryFromEnd(header: string | null, hops: number): string | undefined {
  if (!header) return undefined;
  const entries = header.split(',').map((e) => e.trim());
  return entries[Math.max(0, entries.length - hops)] || undefined;
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
