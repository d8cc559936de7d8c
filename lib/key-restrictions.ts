/**
 * What an API key may be restricted to (docs/keys.md), for the server and the settings
 * pages alike: its access, its permissions, the addresses it may be used from, and the
 * grace period of a roll. Isomorphic (no Node modules): the pages validate with it too.
 */

/** The permissions of an API key, and the operations that need each. */
export const PERMISSIONS = ['contracts:read', 'contracts:export'] as const;
export type Permission = (typeof PERMISSIONS)[number];
export const DEFAULT_PERMISSIONS: readonly Permission[] = PERMISSIONS;
export const PERMISSION_DESCRIPTIONS: Record<Permission, string> = {
  'contracts:read': 'List contracts and read one (GET /contracts, GET /contracts/{id})',
  'contracts:export': 'Export contracts as CSV (POST /contracts/export)',
};
export const isPermission = (value: string): value is Permission => (PERMISSIONS as readonly string[]).includes(value);

/**
 * Which contracts a key (or calendar feed, or webhook endpoint) reaches: everything its
 * owner can see, or the chosen set. Either way never more than the owner can see at the
 * time of the request, and an organisation's policy and "remove access" apply on top.
 */
export type Access = { kind: 'all' } | { kind: 'chosen'; personal: boolean; organizationIds: string[] };
export const ACCESS_ALL: Access = { kind: 'all' };

/** At most this many addresses or ranges per key. */
export const MAX_ALLOWED_ADDRESSES = 20;

/** Roll: how long the previous secret keeps working, in hours (the choices the pages offer; the CLI takes any whole number in range). */
export const ROLL_GRACE_CHOICES = [0, 1, 24, 168] as const;
export const MAX_ROLL_GRACE_HOURS = 168;

// Addresses --------------------------------------------------------------------------------

/** An address or range, parsed: the address as a number, its family and prefix length. */
export interface AddressRange {
  version: 4 | 6;
  value: bigint;
  prefix: number;
}

function parseIPv4(text: string): bigint | undefined {
  const parts = text.split('.');
  if (parts.length !== 4) return undefined;
  let value = 0n;
  for (const part of parts) {
    if (!/^(0|[1-9][0-9]{0,2})$/.test(part) || Number(part) > 255) return undefined;
    value = (value << 8n) | BigInt(part);
  }
  return value;
}

function parseIPv6(text: string): bigint | undefined {
  if (!/^[0-9a-fA-F:.]+$/.test(text)) return undefined;
  const halves = text.split('::');
  if (halves.length > 2) return undefined;
  const groupsOf = (half: string): number[] | undefined => {
    if (half === '') return [];
    const groups: number[] = [];
    const parts = half.split(':');
    for (let i = 0; i < parts.length; i++) {
      const part = parts[i]!;
      if (i === parts.length - 1 && part.includes('.')) {
        const v4 = parseIPv4(part);
        if (v4 === undefined) return undefined;
        groups.push(Number(v4 >> 16n), Number(v4 & 0xffffn));
      } else {
        if (!/^[0-9a-fA-F]{1,4}$/.test(part)) return undefined;
        groups.push(parseInt(part, 16));
      }
    }
    return groups;
  };
  const head = groupsOf(halves[0]!);
  const tail = halves.length === 2 ? groupsOf(halves[1]!) : [];
  if (!head || !tail) return undefined;
  const missing = 8 - head.length - tail.length;
  if (halves.length === 2 ? missing < 1 : missing !== 0) return undefined;
  const groups = [...head, ...Array<number>(missing).fill(0), ...tail];
  return groups.reduce((acc, g) => (acc << 16n) | BigInt(g), 0n);
}

/** Parses "203.0.113.7", "203.0.113.0/24", "2001:db8::1", "2001:db8::/32"; undefined if malformed. */
export function parseAddressRange(text: string): AddressRange | undefined {
  const trimmed = text.trim();
  if (trimmed.length === 0 || trimmed.length > 64) return undefined;
  const [address, prefixText, extra] = trimmed.split('/');
  if (extra !== undefined || address === undefined) return undefined;
  const v4 = parseIPv4(address);
  const version: 4 | 6 | undefined = v4 !== undefined ? 4 : address.includes(':') ? 6 : undefined;
  const value = v4 ?? (version === 6 ? parseIPv6(address) : undefined);
  if (version === undefined || value === undefined) return undefined;
  const bits = version === 4 ? 32 : 128;
  if (prefixText !== undefined && !/^(0|[1-9][0-9]{0,2})$/.test(prefixText)) return undefined;
  const prefix = prefixText === undefined ? bits : Number(prefixText);
  if (prefix > bits) return undefined;
  return { version, value, prefix };
}

function maskOf(version: 4 | 6, prefix: number): bigint {
  const bits = BigInt(version === 4 ? 32 : 128);
  return prefix === 0 ? 0n : ((1n << BigInt(prefix)) - 1n) << (bits - BigInt(prefix));
}

/** Whether `address` (one address, no prefix) is inside `range`. An IPv4-mapped IPv6 address counts as its IPv4 address. */
export function rangeContains(range: AddressRange, address: AddressRange): boolean {
  let candidate = address;
  if (candidate.version === 6 && candidate.value >> 32n === 0xffffn) candidate = { version: 4, value: candidate.value & 0xffffffffn, prefix: 32 };
  if (candidate.version !== range.version) return false;
  const mask = maskOf(range.version, range.prefix);
  return (candidate.value & mask) === (range.value & mask);
}

/** Whether the client address (as text) is allowed by a list; an empty list allows every address. */
export function addressAllowed(allowed: readonly string[], clientAddress: string | undefined): boolean {
  if (allowed.length === 0) return true;
  const client = clientAddress === undefined ? undefined : parseAddressRange(clientAddress);
  if (!client) return false;
  return allowed.some((entry) => {
    const range = parseAddressRange(entry);
    return range !== undefined && rangeContains(range, client);
  });
}

/**
 * Checks a list of allowed addresses as the user wrote it: at most 20 entries, each an
 * IPv4/IPv6 address or CIDR range. Returns the entries (trimmed, duplicates dropped) or
 * the reason the list is refused.
 */
export function checkAllowedAddresses(entries: readonly string[]): { ok: true; addresses: string[] } | { ok: false; message: string } {
  const addresses = [...new Set(entries.map((e) => e.trim()).filter((e) => e.length > 0))];
  if (addresses.length > MAX_ALLOWED_ADDRESSES) {
    return { ok: false, message: `At most ${MAX_ALLOWED_ADDRESSES} allowed addresses or ranges (got ${addresses.length}).` };
  }
  const bad = addresses.find((a) => parseAddressRange(a) === undefined);
  if (bad !== undefined) {
    return { ok: false, message: `"${bad.slice(0, 70)}" is not an IPv4 or IPv6 address or CIDR range (such as 203.0.113.7, 203.0.113.0/24, 2001:db8::/32).` };
  }
  return { ok: true, addresses };
}

// A short, readable form for lists (the settings pages, the CLI) --------------------------------

export interface RestrictionsSummaryInput {
  access: Access;
  permissions: readonly string[];
  allowedAddresses: readonly string[];
  /** Names of organisations by id, for the access text. */
  organizationNames?: ReadonlyMap<string, string>;
}

export function describeAccess(access: Access, organizationNames?: ReadonlyMap<string, string>): string {
  if (access.kind === 'all') return 'everything';
  const parts = [...(access.personal ? ['personal'] : []), ...access.organizationIds.map((id) => organizationNames?.get(id) ?? id)];
  return parts.length === 0 ? 'nothing' : parts.join(', ');
}

export function describePermissions(permissions: readonly string[]): string {
  if (PERMISSIONS.every((p) => permissions.includes(p))) return 'read, export';
  return permissions.map((p) => p.replace(/^contracts:/, '')).join(', ') || 'none';
}

export function describeAddresses(addresses: readonly string[]): string {
  return addresses.length === 0 ? 'any address' : addresses.join(', ');
}

/** "Access: Acme, personal · read · from 203.0.113.0/24" */
export function describeRestrictions(input: RestrictionsSummaryInput): string {
  return [
    `access: ${describeAccess(input.access, input.organizationNames)}`,
    describePermissions(input.permissions),
    `from ${describeAddresses(input.allowedAddresses)}`,
  ].join(' · ');
}
