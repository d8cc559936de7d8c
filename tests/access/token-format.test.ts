import { describe, expect, it } from 'vitest';
import { checksumOf, crc32, hashToken, TOKEN_FORMATS, tokenFormat } from '@/server/access/token-format';
import { statusOf } from '@/server/access/tokens';

const apiKeys = TOKEN_FORMATS.api_key;
const feeds = TOKEN_FORMATS.calendar_feed;

describe.each([
  ['API key', apiKeys, 'cdapi_'],
  ['calendar feed token', feeds, 'cdcal_'],
] as const)('%s format', (_label, format, prefix) => {
  it('is the prefix, 32 base62 characters and a 6-character checksum', () => {
    const token = format.generate();
    expect(token).toMatch(new RegExp(`^${prefix}[0-9A-Za-z]{38}$`));
    expect(token).toHaveLength(format.length);
    expect(token.slice(-6)).toBe(checksumOf(token.slice(prefix.length, -6)));
    expect(format.isWellFormed(token)).toBe(true);
  });

  it('rejects a mistyped token before any lookup: changed, swapped, truncated, extended, wrong case or prefix', () => {
    const token = format.generate();
    const at = prefix.length + 5;
    const changed = token.slice(0, at) + (token[at] === 'a' ? 'b' : 'a') + token.slice(at + 1);
    const swapped = token.slice(0, at) + token[at + 1] + token[at] + token.slice(at + 2);
    expect(format.isWellFormed(changed)).toBe(false);
    if (token[at] !== token[at + 1]) expect(format.isWellFormed(swapped)).toBe(false);
    expect(format.isWellFormed(token.slice(0, -1))).toBe(false);
    expect(format.isWellFormed(`${token}x`)).toBe(false);
    expect(format.isWellFormed(token.toUpperCase())).toBe(false);
    expect(format.isWellFormed(`ghp_${token.slice(prefix.length)}`)).toBe(false);
    expect(format.isWellFormed(`${token} `)).toBe(false);
    expect(format.isWellFormed('')).toBe(false);
  });

  it('lists a hint of the prefix and the last four characters', () => {
    const token = format.generate();
    expect(format.hint(token)).toBe(`${prefix}…${token.slice(-4)}`);
  });
});

describe('secret tokens', () => {
  it('draw their 32 characters uniformly from all of base62 (about 190 bits): no repeats, no bias', () => {
    const keys = Array.from({ length: 4000 }, () => apiKeys.generate());
    expect(new Set(keys).size).toBe(keys.length);
    const counts = new Map<string, number>();
    for (const k of keys) for (const c of k.slice('cdapi_'.length, -6)) counts.set(c, (counts.get(c) ?? 0) + 1);
    expect(counts.size).toBe(62);
    // 128,000 draws: each character is expected about 2,064 times (standard deviation
    // about 45). A modulo bias (bytes 248..255 folded onto the first 8 characters) would
    // push those 25% higher; ±12% is over 5 standard deviations, so chance never fails it.
    const expected = (4000 * 32) / 62;
    for (const n of counts.values()) expect(Math.abs(n - expected) / expected).toBeLessThan(0.12);
  });

  it('use the standard CRC32 (IEEE) checksum', () => {
    expect(crc32('123456789')).toBe(0xcbf43926);
    expect(crc32('')).toBe(0);
  });

  it('never take an API key for a feed token, nor a feed token for an API key', () => {
    const token = feeds.generate();
    const key = apiKeys.generate();
    expect(apiKeys.isWellFormed(token)).toBe(false);
    expect(feeds.isWellFormed(key)).toBe(false);
    // The same random part under the other prefix is a different secret with a different hash.
    expect(hashToken(`cdapi_${token.slice('cdcal_'.length)}`)).not.toBe(hashToken(token));
  });

  it('are stored as a SHA-256 hex hash that holds nothing of the secret', () => {
    const key = apiKeys.generate();
    expect(hashToken(key)).toMatch(/^[0-9a-f]{64}$/);
    // The FIPS 180-2 test vector: it is plain SHA-256 of the token's UTF-8 text.
    expect(hashToken('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(hashToken(key)).not.toContain(key.slice('cdapi_'.length, -6));
  });

  it('accept only plain lower-case prefixes, which go into a regular expression', () => {
    expect(() => tokenFormat('cd.*_')).toThrow();
    expect(() => tokenFormat('cdcal')).toThrow();
    expect(tokenFormat('abc_').length).toBe(42);
  });
});

describe('token status', () => {
  const now = new Date('2026-11-22T10:00:00.000Z');
  it('expires at the exact millisecond, not at the end of a day', () => {
    expect(statusOf({ expiresAt: new Date('2026-11-22T10:00:00.001Z'), revokedAt: null }, now)).toBe('active');
    expect(statusOf({ expiresAt: new Date('2026-11-22T10:00:00.000Z'), revokedAt: null }, now)).toBe('expired');
    expect(statusOf({ expiresAt: new Date('2026-11-22T09:59:59.999Z'), revokedAt: null }, now)).toBe('expired');
    expect(statusOf({ expiresAt: null, revokedAt: null }, now)).toBe('active');
    expect(statusOf({ expiresAt: null, revokedAt: now }, now)).toBe('revoked');
  });
});
