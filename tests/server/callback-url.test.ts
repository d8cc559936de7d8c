import { describe, expect, it } from 'vitest';
import { safeCallbackUrl } from '@/server/auth/callback-url';

describe('safeCallbackUrl', () => {
  it.each([
    ['/settings/api-keys', '/settings/api-keys'],
    ['/contracts?status=completed#top', '/contracts?status=completed#top'],
    ['/a/../settings', '/settings'],
  ])('keeps the path %j on this site', (value, expected) => {
    expect(safeCallbackUrl(value)).toBe(expected);
  });

  it.each([
    'https://evil.example',
    '//evil.example',
    '/\\evil.example',
    '/\t/evil.example',
    '/\n/evil.example',
    '/\r\n/evil.example',
    'javascript:alert(1)',
    'settings',
    '',
    undefined,
    ['/settings'],
  ])('refuses %j', (value) => {
    expect(safeCallbackUrl(value)).toBe('/settings/api-keys');
  });
});
