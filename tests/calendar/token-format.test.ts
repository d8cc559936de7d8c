import { describe, expect, it } from 'vitest';
import { checksumOf, generateApiKey, hashApiKey, isWellFormedApiKey, tokenFormat } from '@/server/api-keys/format';
import {
  feedHintOf,
  generateFeedToken,
  hashFeedToken,
  isWellFormedFeedToken,
} from '@/server/calendar/token-format';

describe('calendar feed token format', () => {
  it('is cdcal_, 32 base62 characters and the 6-character CRC32 checksum of API keys', () => {
    const token = generateFeedToken();
    expect(token).toMatch(/^cdcal_[0-9A-Za-z]{38}$/);
    expect(token.slice(-6)).toBe(checksumOf(token.slice('cdcal_'.length, -6)));
    expect(isWellFormedFeedToken(token)).toBe(true);
    expect(new Set(Array.from({ length: 1000 }, generateFeedToken)).size).toBe(1000);
  });

  it('never takes an API key for a feed token, nor a feed token for an API key', () => {
    const token = generateFeedToken();
    const key = generateApiKey();
    expect(isWellFormedApiKey(token)).toBe(false);
    expect(isWellFormedFeedToken(key)).toBe(false);
    // The same random part under the other prefix is a different secret with a different hash.
    const swapped = `cdapi_${token.slice('cdcal_'.length)}`;
    expect(hashApiKey(swapped)).not.toBe(hashFeedToken(token));
  });

  it('rejects a mistyped token before any lookup', () => {
    const token = generateFeedToken();
    const at = 10;
    const changed = token.slice(0, at) + (token[at] === 'a' ? 'b' : 'a') + token.slice(at + 1);
    expect(isWellFormedFeedToken(changed)).toBe(false);
    expect(isWellFormedFeedToken(token.slice(0, -1))).toBe(false);
    expect(isWellFormedFeedToken(`${token}x`)).toBe(false);
    expect(isWellFormedFeedToken(token.toUpperCase())).toBe(false);
    expect(isWellFormedFeedToken('')).toBe(false);
  });

  it('stores SHA-256 hex and lists a hint of the prefix and the last four characters', () => {
    const token = generateFeedToken();
    expect(hashFeedToken(token)).toMatch(/^[0-9a-f]{64}$/);
    expect(hashFeedToken('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(feedHintOf(token)).toBe(`cdcal_…${token.slice(-4)}`);
  });

  it('accepts only plain lower-case prefixes, which go into a regular expression', () => {
    expect(() => tokenFormat('cd.*_')).toThrow();
    expect(() => tokenFormat('cdcal')).toThrow();
    expect(tokenFormat('abc_').length).toBe(42);
  });
});
