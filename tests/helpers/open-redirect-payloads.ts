/**
 * Open-redirect payloads: values that a naive "starts with /" check lets through and that
 * a browser (or Next's client router, following "http://host//evil.example") resolves to
 * another host. Used by
 * tests/server/callback-url.test.ts and e2e/security-web.spec.ts (issue 17).
 */
export const OPEN_REDIRECT_PAYLOADS = [
  'https://evil.example',
  'http:evil.example',
  '//evil.example',
  '///evil.example',
  '////evil.example',
  '/\\evil.example',
  '\\\\evil.example',
  '/\t/evil.example',
  '/\n/evil.example',
  '/\r\n/evil.example',
  '/.//evil.example',
  '/..//evil.example',
  '/.///evil.example',
  '/%2e//evil.example',
  '/%2E//evil.example',
  '/%2e%2e//evil.example',
  '/.%2e//evil.example',
  '/%2e./evil.example/..//evil.example',
  '/a/..//evil.example',
  '/a/b/../..//evil.example',
  '/a/%2e%2e//evil.example',
  '/././/evil.example',
  '/.//evil.example/path?x=1#h',
  '/..//evil.example:443/',
  '/..//user@evil.example',
  '/.//\\evil.example',
  'javascript:alert(1)',
  'javascript:alert(1)//x',
  'settings',
  '',
] as const;
