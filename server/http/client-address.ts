import { isIP } from 'node:net';
import { config, type ClientAddressSource } from '@/server/config';
import { logger } from '@/server/observability/logger';

/**
 * The client address that failed authentication is counted against (a blocked address
 * gets 429 even with a valid key). It must come from something the client cannot write:
 * a client that picks its address can guess keys without limit, or get another client's
 * address blocked.
 *
 * Route handlers never see the socket. What they see under `next start` (16.4) is the
 * request's own X-Forwarded-For and X-Real-IP, as the client sent them: Next.js fills in
 * X-Forwarded-For with the socket's address only when the header is absent, and never
 * appends to it. So only a proxy or platform in front of the app can vouch for an
 * address, and the configuration says which (server/config.ts, docs/configuration.md "Client address").
 */

/**
 * The one bucket of every client whose address cannot be trusted. Its consequence is
 * documented in docs/configuration.md ("Client address"): after 30 failed attempts a minute from anyone, every bad key
 * from an unidentified client gets 429 (correct keys are still served).
 */
export const SHARED_CLIENT_BUCKET = 'unidentified-clients';

export function clientAddressOf(headers: Headers, source: ClientAddressSource = config().clientAddress): string {
  if (source.from === 'none') {
    warnOnceInProduction();
    return SHARED_CLIENT_BUCKET;
  }
  const raw = source.from === 'header' ? headers.get(source.header) : forwardedEntry(headers.get('x-forwarded-for'), source.hops);
  return (raw !== null && normalizeAddress(raw)) || SHARED_CLIENT_BUCKET;
}

/**
 * The client's own address (not its bucket: an IPv6 address whole, not its /64), for an
 * API key's allowed addresses; undefined when the deployment cannot know it (no trusted
 * proxy configured, or a value that is not an address).
 */
export function clientIpOf(headers: Headers, source: ClientAddressSource = config().clientAddress): string | undefined {
  if (source.from === 'none') return undefined;
  const raw = source.from === 'header' ? headers.get(source.header) : forwardedEntry(headers.get('x-forwarded-for'), source.hops);
  if (raw === null) return undefined;
  const address = stripPort(raw.trim());
  return isIP(address) ? address : undefined;
}

/** Whether this deployment knows client addresses (allowed addresses cannot apply otherwise). */
export function clientAddressKnown(source: ClientAddressSource = config().clientAddress): boolean {
  return source.from !== 'none';
}

function stripPort(address: string): string {
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(address);
  if (bracketed) return bracketed[1]!;
  if (/^\d+\.\d+\.\d+\.\d+:\d+$/.test(address)) return address.slice(0, address.lastIndexOf(':'));
  return address;
}

/**
 * The entry `hops` places from the end: each trusted proxy appends the address it was
 * connected from, so the last `hops` entries are theirs and anything before is the
 * client's word. A shorter list means the request did not come through every trusted
 * proxy (or a proxy replaced the header): nothing in it can be vouched for.
 */
function forwardedEntry(header: string | null, hops: number): string | null {
  if (!header) return null;
  const entries = header.split(',');
  return entries.length >= hops ? entries[entries.length - hops]! : null;
}

/**
 * An address as a bucket name, or undefined when the value is not an address (then the
 * proxy is not the one the configuration describes, and the value proves nothing).
 * IPv4 as is; IPv4-mapped IPv6 as IPv4; other IPv6 by its /64, the network one
 * subscriber is usually given, so that a client cannot dodge the limit by rotating
 * through its own 2^64 addresses.
 */
export function normalizeAddress(value: string): string | undefined {
  let address = value.trim();
  // Some proxies add the client's port: "203.0.113.7:51234", "[2001:db8::1]:51234".
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(address);
  if (bracketed) address = bracketed[1]!;
  else if (/^\d+\.\d+\.\d+\.\d+:\d+$/.test(address)) address = address.slice(0, address.lastIndexOf(':'));

  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) address = mapped[1]!;
  const version = isIP(address);
  if (version === 4) return address;
  if (version === 6) return ipv6Network64(address);
  return undefined;
}

function ipv6Network64(address: string): string | undefined {
  let canonical: string;
  try {
    // The URL parser writes IPv6 in one canonical form: lower case, "::" compressed, a
    // dotted IPv4 tail as hex groups. A zone id ("%eth0") makes it throw.
    canonical = new URL(`http://[${address}]/`).hostname.slice(1, -1);
  } catch {
    return undefined;
  }
  const [head, tail] = canonical.split('::') as [string, string | undefined];
  const front = head ? head.split(':') : [];
  const back = tail ? tail.split(':') : [];
  const groups = tail === undefined ? front : [...front, ...Array<string>(8 - front.length - back.length).fill('0'), ...back];
  return `${groups.slice(0, 4).join(':')}::/64`;
}

const WARNED = Symbol.for('contract-data-api.client-address-warned');

/** Says once per process, in production, that every client shares the failure bucket. */
function warnOnceInProduction(): void {
  const g = globalThis as typeof globalThis & { [WARNED]?: boolean };
  if (g[WARNED] || process.env.NODE_ENV !== 'production') return;
  g[WARNED] = true;
  logger().warn(
    'no trusted proxy is configured, so every client shares one limit on failed API keys ' +
      '(one client sending bad keys gets every other bad key refused too); behind a proxy set TRUSTED_PROXY_HOPS or CLIENT_ADDRESS_HEADER (docs/configuration.md, Client address)',
  );
}
