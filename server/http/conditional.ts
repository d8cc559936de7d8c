import { createHash } from 'node:crypto';

/**
 * Conditional GET (RFC 9110 8.8.3, 13.1.2, 15.4.5): entity tags, If-None-Match, and the
 * 304 answer.
 *
 * The tags are weak (`W/"…"`), as GitHub's: they are computed from the representation's
 * content, and a proxy or the server that compresses the body must not be taken to promise
 * byte-identical transfers. If-None-Match compares weakly anyway, so a weak tag
 * revalidates exactly like a strong one.
 */

/** A weak entity tag of a representation: 128 bits of SHA-256 of its content. */
export function weakEtag(body: string | Uint8Array): string {
  return weakEtagOfDigest(createHash('sha256').update(body).digest());
}

/** The weak entity tag of a SHA-256 digest (for a body hashed as it is written). */
export function weakEtagOfDigest(digest: Buffer): string {
  return `W/"${digest.toString('base64url').slice(0, 22)}"`;
}

/** The entity tags of an If-None-Match field ('*' for any), undefined when absent. */
export function ifNoneMatchOf(headers: Headers): '*' | string[] | undefined {
  const value = headers.get('if-none-match');
  if (value === null) return undefined;
  if (value.trim() === '*') return '*';
  // entity-tag = [ "W/" ] DQUOTE *etagc DQUOTE; anything else in the list is ignored.
  return [...value.matchAll(/(?:W\/)?"[^"]*"/g)].map((m) => m[0]);
}

/** Weak comparison (RFC 9110 8.8.3.2): the opaque tags are equal, whatever their W/ prefix. */
export function matchesAny(ifNoneMatch: '*' | string[], etag: string): boolean {
  if (ifNoneMatch === '*') return true;
  const opaque = etag.replace(/^W\//, '');
  return ifNoneMatch.some((tag) => tag.replace(/^W\//, '') === opaque);
}

// What a 304 keeps of the 200's headers: RFC 9110 15.4.5 asks for the validators and the
// caching fields; the request id and the rate-limit state are this API's own.
const NOT_MODIFIED_HEADERS = [
  'cache-control',
  'etag',
  'last-modified',
  'vary',
  'expires',
  'content-location',
  'x-request-id',
  'access-control-allow-origin',
  'x-ratelimit-limit',
  'x-ratelimit-remaining',
  'x-ratelimit-reset',
  'ratelimit-policy',
  'ratelimit',
  'x-content-type-options',
];

/** 304 Not Modified: no body, and only the headers a 304 carries. */
export function notModified(headers: Headers): Response {
  const kept = new Headers();
  for (const name of NOT_MODIFIED_HEADERS) {
    const value = headers.get(name);
    if (value !== null) kept.set(name, value);
  }
  return new Response(null, { status: 304, headers: kept });
}
