import { describe, expect, it } from 'vitest';
import {
  checksumOf,
  crc32,
  generateApiKey,
  hashApiKey,
  hintOf,
  isWellFormedApiKey,
  KEY_LENGTH,
  KEY_PREFIX,
} from '@/server/api-keys/format';
import { statusOf } from '@/server/api-keys/service';

describe('API key format', () => {
  it('is the prefix, 32 base62 characters and a 6-character checksum', () => {
    const key = generateApiKey();
    expect(key).toMatch(/^cdapi_[0-9A-Za-z]{38}$/);
    expect(key).toHaveLength(KEY_LENGTH);
    expect(key.slice(-6)).toBe(checksumOf(key.slice(KEY_PREFIX.length, -6)));
    expect(isWellFormedApiKey(key)).toBe(true);
  });

  it('draws its 32 characters uniformly from all of base62 (about 190 bits): no repeats, no bias', () => {
    const keys = Array.from({ length: 4000 }, generateApiKey);
    expect(new Set(keys).size).toBe(keys.length);
    const counts = new Map<string, number>();
    for (const k of keys) for (const c of k.slice(KEY_PREFIX.length, -6)) counts.set(c, (counts.get(c) ?? 0) + 1);
    expect(counts.size).toBe(62);
    // 128,000 draws: each character is expected about 2,064 times (standard deviation
    // about 45). A modulo bias (bytes 248..255 folded onto the first 8 characters) would
    // push those 25% higher; ±12% is over 5 standard deviations, so chance never fails it.
    const expected = (4000 * 32) / 62;
    for (const n of counts.values()) expect(Math.abs(n - expected) / expected).toBeLessThan(0.12);
  });

  it('uses the standard CRC32 (IEEE) checksum', () => {
    expect(crc32('123456789')).toBe(0xcbf43926);
    expect(crc32('')).toBe(0);
  });

  it('rejects a mistyped key before any lookup: changed, swapped, truncated, wrong prefix', () => {
    const key = generateApiKey();
    const at = KEY_PREFIX.length + 5;
    const changed = key.slice(0, at) + (key[at] === 'a' ? 'b' : 'a') + key.slice(at + 1);
    const swapped = key.slice(0, at) + key[at + 1] + key[at] + key.slice(at + 2);
    expect(isWellFormedApiKey(changed)).toBe(false);
    if (key[at] !== key[at + 1]) expect(isWellFormedApiKey(swapped)).toBe(false);
    expect(isWellFormedApiKey(key.slice(0, -1))).toBe(false);
    expect(isWellFormedApiKey(`ghp_${key.slice(KEY_PREFIX.length)}`)).toBe(false);
    expect(isWellFormedApiKey(`${key} `)).toBe(false);
    expect(isWellFormedApiKey('')).toBe(false);
  });

  it('stores a SHA-256 hex hash and shows a hint of prefix and last four characters', () => {
    const key = generateApiKey();
    expect(hashApiKey(key)).toMatch(/^[0-9a-f]{64}$/);
    // The FIPS 180-2 test vector: it is plain SHA-256 of the key's UTF-8 text.
    expect(hashApiKey('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(hashApiKey(key)).not.toContain(key.slice(KEY_PREFIX.length, -6));
    expect(hintOf(key)).toBe(`cdapi_…${key.slice(-4)}`);
  });
});

describe('key status', () => {
  const now = new Date('2026-11-22T10:00:00.000Z');
  it('expires at the exact millisecond, not at the end of a day', () => {
    expect(statusOf({ expiresAt: new Date('2026-11-22T10:00:00.001Z'), revokedAt: null }, now)).toBe('active');
    expect(statusOf({ expiresAt: new Date('2026-11-22T10:00:00.000Z'), revokedAt: null }, now)).toBe('expired');
    expect(statusOf({ expiresAt: new Date('2026-11-22T09:59:59.999Z'), revokedAt: null }, now)).toBe('expired');
    expect(statusOf({ expiresAt: null, revokedAt: null }, now)).toBe('active');
    expect(statusOf({ expiresAt: null, revokedAt: now }, now)).toBe('revoked');
  });
});
