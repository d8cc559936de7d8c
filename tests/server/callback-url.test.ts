import { describe, expect, it } from 'vitest';
import { redirectPathOf, safeCallbackUrl, safeRedirect } from '@/server/auth/callback-url';
import { OPEN_REDIRECT_PAYLOADS } from '../helpers/open-redirect-payloads';


/** What a browser does with a Location header on this site: the host it lands on. */
const landsOn = (location: string) => new URL(location, 'https://app.example').host;

describe('safeCallbackUrl', () => {
  it.each([
    ['/settings/api-keys', '/settings/api-keys'],
    ['/contracts?status=completed#top', '/contracts?status=completed#top'],
    ['/a/../settings', '/settings'],
    ['/%2f%2fevil.example', '/%2f%2fevil.example'],
    ['/contracts?next=//evil.example', '/contracts?next=//evil.example'],
    ['/%09/evil.example', '/%09/evil.example'],
  ])('keeps the path %j on this site', (value, expected) => {
    expect(safeCallbackUrl(value)).toBe(expected);
    expect(landsOn(safeCallbackUrl(value))).toBe('app.example');
  });

  it.each(OPEN_REDIRECT_PAYLOADS)('refuses %j', (value) => {
    const result = safeCallbackUrl(value);
    expect(result).toBe('/settings/api-keys');
  });

  it.each([undefined, null, 42, ['/settings']])('refuses %j', (value) => {
    expect(safeCallbackUrl(value)).toBe('/settings/api-keys');
  });

  it('never answers a path that starts with // or /\\, whatever it is given (percent-encoded dots and slashes in every position)', () => {
    const parts = ['/', '.', '..', '%2e', '%2E', '%2e%2e', '/', '//', '\\', 'evil.example', 'a', '%2f', '%5c', '?', '#', '@'];
    let checked = 0;
    for (const a of parts) for (const b of parts) for (const c of parts) for (const d of parts) {
      const value = `/${a}${b}${c}${d}`;
      const result = safeCallbackUrl(value, '/fallback');
      expect(result, value).toMatch(/^\/(?![/\\])/);
      expect(landsOn(result), value).toBe('app.example');
      checked++;
    }
    expect(checked).toBe(parts.length ** 4);
  });
});

describe("next-auth's redirect callback (safeRedirect)", () => {
  const baseUrl = 'https://app.example';

  it.each(OPEN_REDIRECT_PAYLOADS)('keeps %j on the site', (value) => {
    const result = safeRedirect({ url: value, baseUrl });
    expect(result.startsWith(`${baseUrl}/`)).toBe(true);
    expect(new URL(result).pathname).toMatch(/^\/(?![/\\])/);
  });

  it.each(OPEN_REDIRECT_PAYLOADS.filter((p) => p.startsWith('/')))('keeps the absolute form of %j on the site', (value) => {
    // What next-auth's default callback made of "/…": the base URL and the path.
    const result = safeRedirect({ url: `${baseUrl}${value}`, baseUrl });
    expect(landsOn(result)).toBe('app.example');
    expect(new URL(result).pathname).toMatch(/^\/(?![/\\])/);
  });

  it('keeps a path of this site, absolute or relative', () => {
    expect(safeRedirect({ url: '/settings/api-keys?x=1', baseUrl })).toBe(`${baseUrl}/settings/api-keys?x=1`);
    expect(safeRedirect({ url: `${baseUrl}/contracts`, baseUrl })).toBe(`${baseUrl}/contracts`);
    expect(safeRedirect({ url: 'https://app.example.evil.example/x', baseUrl })).toBe(`${baseUrl}/`);
  });
});

describe('redirectPathOf (the server actions answer a path, never a host)', () => {
  it.each([
    ['https://evil.example/settings/api-keys', '/settings/api-keys'],
    ['http://app.example//evil.example', '/'],
    ['http://app.example/.//evil.example', '/'],
    ['/contracts', '/contracts'],
  ])('%j -> %j', (url, path) => {
    expect(redirectPathOf(url)).toBe(path);
  });
});
