import 'server-only';
/**
 * A callback URL from a query string or a form, kept only when it is a path on this site.
 *
 * Browsers drop tabs and line breaks inside URLs and read a backslash as a slash, so
 * "/\t/evil.com" would lead elsewhere: those are refused outright. The rest is resolved
 * against a placeholder origin, which removes dot segments: "/.//evil.example",
 * "/..//x", "/%2e//x" all become "//evil.example"-like paths. A path that starts with
 * "//" (or "/\") is a protocol-relative URL to a browser, and Next's client router
 * follows "http://host//evil.example" off-site too: such a result is refused, never
 * returned (the bypass list is tests/server/callback-url.test.ts).
 */
const PLACEHOLDER = 'http://placeholder.invalid';

export function safeCallbackUrl(value: unknown, fallback = '/settings/api-keys'): string {
  if (typeof value !== 'string' || !value.startsWith('/') || /[\\\u0000-\u001f\u007f]/.test(value)) return fallback;
  try {
    const url = new URL(value, PLACEHOLDER);
    if (url.origin !== PLACEHOLDER) return fallback;
    const path = `${url.pathname}${url.search}${url.hash}`;
    if (!isPlainPath(path)) return fallback;
    return path;
  } catch {
    return fallback;
  }
}

/** A path that every URL parser reads as a path on the same origin: "/x", never "//x" or "/\x". */
function isPlainPath(path: string): boolean {
  if (!path.startsWith('/') || path[1] === '/' || path[1] === '\\') return false;
  // Resolving the result once more must keep it where it is (no second decoding step moves it).
  const again = new URL(path, PLACEHOLDER);
  return again.origin === PLACEHOLDER && `${again.pathname}${again.search}${again.hash}` === path;
}

/**
 * next-auth's `redirect` callback: where to send the browser after sign-in or sign-out.
 * next-auth's default prefixes any "/..." with the base URL, so "//evil.example" became
 * "http://host//evil.example". Only a path of this site is kept, on the base URL's origin.
 */
export function safeRedirect({ url, baseUrl }: { url: string; baseUrl: string }): string {
  const base = new URL(baseUrl).origin;
  let target: URL;
  try {
    target = new URL(url, base);
  } catch {
    return `${base}/`;
  }
  if (target.origin !== base) return `${base}/`;
  // The path as written (not re-resolved from the absolute URL): "http://host//x" keeps its "//x".
  const raw = url.startsWith(base) ? url.slice(base.length) || '/' : url;
  return `${base}${safeCallbackUrl(raw.startsWith('/') ? raw : `${target.pathname}${target.search}${target.hash}`, '/')}`;
}

/**
 * Where a server action sends the browser after next-auth answered `url`: the path only.
 * next-auth builds `url` on the origin of the request's headers (X-Forwarded-Host when no
 * AUTH_URL is set, whoever wrote it); a relative redirect needs no origin at all.
 */
export function redirectPathOf(url: string): string {
  try {
    const target = new URL(url, PLACEHOLDER);
    return safeCallbackUrl(`${target.pathname}${target.search}${target.hash}`, '/');
  } catch {
    return '/';
  }
}
