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

  it('carries at least 160 bits of randomness: no repeats, every base62 character used', () => {
    const keys = Array.from({ length: 2000 }, generateApiKey);
    expect(new Set(keys).size).toBe(keys.length);
    const chars = new Set(keys.flatMap((k) => [...k.slice(KEY_PREFIX.length, -6)]));
    expect(chars.size).toBe(62);
    // 32 characters of base62 = 32 × log2(62) ≈ 190.5 bits.
    expect(32 * Math.log2(62)).toBeGreaterThan(160);
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
    expect(hashApiKey(key)).toBe(hashApiKey(key));
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
