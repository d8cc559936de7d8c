import 'server-only';
/**
 * A callback URL from a query string, kept only when it is a path on this site. Browsers
 * drop tabs and line breaks inside URLs and read a backslash as a slash, so "/\t/evil.com"
 * would lead elsewhere: the value is resolved against a placeholder origin and kept only
 * when it stays there.
 */
export function safeCallbackUrl(value: unknown, fallback = '/settings/api-keys'): string {
  if (typeof value !== 'string' || !value.startsWith('/') || /[\\\u0000-\u001f\u007f]/.test(value)) return fallback;
  try {
    const url = new URL(value, 'http://placeholder.invalid');
    if (url.origin !== 'http://placeholder.invalid') return fallback;
    return `${url.pathname}${url.search}${url.hash}`;
  } catch {
    return fallback;
  }
}
