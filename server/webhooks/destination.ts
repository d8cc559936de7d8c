import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';
import { WEBHOOK_URL_MAX_LENGTH } from '@/lib/webhooks';

/**
 * Where a webhook may be sent. The app sends requests to addresses its users choose, so
 * without care it would carry them into the network it runs in (SSRF): the cloud's
 * metadata service, a database port, an admin page on localhost. So:
 *
 * - only https in production (plain http in development, or with WEBHOOK_ALLOW_PRIVATE_URLS);
 * - no user name or password in the URL (it would end up in logs and on screens);
 * - the host must resolve to public addresses only: loopback, private, link-local
 *   (169.254.169.254, the metadata service), carrier-grade NAT, multicast, documentation
 *   and reserved ranges are refused, in IPv4 and IPv6 (IPv4-mapped and NAT64 forms too);
 * - checked when an endpoint is created and again at every delivery, and the delivery
 *   connects to the very address that was checked (./sender.ts), so a DNS answer that
 *   changes in between (DNS rebinding) cannot send it elsewhere.
 *
 * WEBHOOK_ALLOW_PRIVATE_URLS=true lifts the address rule (development, tests, receivers on
 * an internal network).
 */

export interface DestinationPolicy {
  allowPrivate: boolean;
  allowHttp: boolean;
}

/** Resolves a host name to every address it has (the system resolver by default; tests inject one). */
export type Resolver = (hostname: string) => Promise<{ address: string; family: number }[]>;

export const systemResolver: Resolver = (hostname) => lookup(hostname, { all: true, verbatim: true });

/** Why a URL is refused: the message is shown to the endpoint's owner. */
export class DestinationError extends Error {
  override name = 'DestinationError';
}

const BLOCKED = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8], // "this network"
  ['10.0.0.0', 8], // private
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local, cloud metadata (169.254.169.254)
  ['172.16.0.0', 12], // private
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // documentation
  ['192.88.99.0', 24], // 6to4 relay anycast
  ['192.168.0.0', 16], // private
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // documentation
  ['203.0.113.0', 24], // documentation
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
] as const) {
  BLOCKED.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  ['::', 128], // unspecified
  ['::1', 128], // loopback
  ['100::', 64], // discard
  ['2001::', 23], // IETF protocol assignments (Teredo and others)
  ['2001:db8::', 32], // documentation
  ['fc00::', 7], // unique local (AWS's metadata service fd00:ec2::254 among them)
  ['fe80::', 10], // link-local
  ['fec0::', 10], // site-local (deprecated)
  ['ff00::', 8], // multicast
] as const) {
  BLOCKED.addSubnet(network, prefix, 'ipv6');
}

/** The IPv4 address carried inside an IPv6 one (NAT64 64:ff9b::/96, 6to4 2002::/16), if any. */
function embeddedIpv4(address: string): string | undefined {
  const lower = address.toLowerCase();
  const words = expandIpv6(lower);
  if (!words) return undefined;
  const v4 = (hi: number, lo: number) => `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
  if (words[0] === 0x64 && words[1] === 0xff9b && words.slice(2, 6).every((w) => w === 0)) return v4(words[6]!, words[7]!);
  if (words[0] === 0x2002) return v4(words[1]!, words[2]!);
  return undefined;
}

/** The eight 16-bit words of an IPv6 address (dotted IPv4 tails included). */
function expandIpv6(address: string): number[] | undefined {
  let text = address;
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split('::') as [string, string | undefined];
  const parse = (part: string) => (part ? part.split(':').map((w) => parseInt(w, 16)) : []);
  const left = parse(head);
  const right = tail === undefined ? [] : parse(tail);
  const missing = 8 - left.length - right.length;
  if (missing < 0 || (tail === undefined && missing !== 0)) return undefined;
  return [...left, ...Array<number>(missing).fill(0), ...right];
}

/** Whether an address (IPv4 or IPv6) is one the public internet routes to. */
export function isPublicAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return !BLOCKED.check(address, 'ipv4');
  if (family !== 6) return false;
  // BlockList matches IPv4-mapped addresses (::ffff:127.0.0.1) against the IPv4 rules.
  if (BLOCKED.check(address, 'ipv6')) return false;
  const inner = embeddedIpv4(address);
  return inner === undefined || !BLOCKED.check(inner, 'ipv4');
}

/**
 * A URL as typed, checked for its form (no network): scheme, credentials, length. Throws
 * DestinationError with a message for the owner.
 */
export function parseDestination(text: string, policy: DestinationPolicy): URL {
  const trimmed = text.trim();
  if (trimmed.length === 0) throw new DestinationError('Enter the URL of your endpoint.');
  if (trimmed.length > WEBHOOK_URL_MAX_LENGTH) throw new DestinationError(`The URL must be at most ${WEBHOOK_URL_MAX_LENGTH} characters.`);
  let url: URL;
  try {
    url = new URL(trimmed);
  } catch {
    throw new DestinationError('Enter a full URL, such as https://example.com/webhooks.');
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && policy.allowHttp)) {
    throw new DestinationError(policy.allowHttp ? 'The URL must start with https:// or http://.' : 'The URL must start with https://.');
  }
  if (url.username || url.password) throw new DestinationError('The URL must not contain a user name or password; authenticate requests by their signature.');
  if (url.hash) throw new DestinationError('The URL must not contain a fragment (#…).');
  if (!url.hostname) throw new DestinationError('The URL has no host.');
  return url;
}

/** The host of a URL as a resolver takes it (IPv6 literals without brackets). */
export function hostOf(url: URL): string {
  return url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
}

/**
 * The address a delivery to `url` connects to: the host's first address, once every
 * address it resolves to is public (a host that also resolves to a private address is
 * refused whole: an attacker's DNS could otherwise race the two).
 */
export async function resolveDestination(url: URL, policy: DestinationPolicy, resolve: Resolver = systemResolver): Promise<{ address: string; family: 4 | 6 }> {
  const host = hostOf(url);
  const literal = isIP(host);
  let addresses: { address: string; family: number }[];
  if (literal) {
    addresses = [{ address: host, family: literal }];
  } else {
    try {
      addresses = await resolve(host);
    } catch {
      throw new DestinationError(`The host name ${host} does not resolve.`);
    }
    if (addresses.length === 0) throw new DestinationError(`The host name ${host} does not resolve.`);
  }
  if (!policy.allowPrivate) {
    const refused = addresses.find((a) => !isPublicAddress(a.address));
    if (refused) {
      throw new DestinationError(
        `${literal ? 'The address' : `The host name ${host} resolves to`} ${refused.address}, a private, loopback, link-local or reserved address: webhooks are only sent to public addresses.`,
      );
    }
  }
  const first = addresses[0]!;
  return { address: first.address, family: first.family === 6 ? 6 : 4 };
}
