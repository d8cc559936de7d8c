import { createHash } from 'node:crypto';

/**
 * A UUID (version 4 layout) derived from a name, so that seeding is deterministic:
 * the same name gives the same id on every machine and every run.
 */
export function stableUuid(name: string): string {
  const h = createHash('sha256').update(`contract-data-api:${name}`).digest();
  h[6] = (h[6]! & 0x0f) | 0x40;
  h[8] = (h[8]! & 0x3f) | 0x80;
  const hex = h.subarray(0, 16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}
