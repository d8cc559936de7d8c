/**
 * Whether a browser request comes from this site. Browsers send Sec-Fetch-Site and
 * Origin on every cross-site POST, so a mutation whose headers name another site is a
 * forged request (CSRF) and is refused. Requests without either header do not come from
 * a browser page, and still need the session cookie.
 */
export function isSameOriginRequest(req: Request): boolean {
  const fetchSite = req.headers.get('sec-fetch-site');
  if (fetchSite && fetchSite !== 'same-origin' && fetchSite !== 'none') return false;
  const origin = req.headers.get('origin');
  return origin ? isThisHost(origin, req.headers) : true;
}

/**
 * Whether a GET that acts with the session cookie (the contracts page's CSV download) was
 * started by another site. The session cookie is SameSite=Lax, which browsers send on a
 * top-level navigation from anywhere: a link or a script on another site could make a
 * signed-in browser download, and use up its download quota. Browsers say where a
 * navigation comes from in Sec-Fetch-Site (`none`: typed, a bookmark); a browser without
 * it still sends a Referer, which names another site's origin
 * (Referrer-Policy strict-origin-when-cross-origin). Without either, the request does
 * not come from a page on another site.
 */
export function isCrossSiteNavigation(req: Request): boolean {
  const fetchSite = req.headers.get('sec-fetch-site');
  if (fetchSite) return fetchSite !== 'same-origin' && fetchSite !== 'none';
  const referer = req.headers.get('referer');
  return referer ? !isThisHost(referer, req.headers) : false;
}

/** Whether a URL or origin (Origin, Referer) names the host the browser addressed. */
function isThisHost(url: string, headers: Headers): boolean {
  try {
    const expected = new URL(url);
    const host = publicHostOf(headers);
    // Parsed with the given scheme, so that case and a default port ("example.com:443")
    // compare as the browser wrote them; a host that does not parse is no match.
    return host !== undefined && new URL(`${expected.protocol}//${host}`).host === expected.host;
  } catch {
    return false;
  }
}

/**
 * The host the browser addressed. Behind proxies X-Forwarded-Host may be a list, one
 * entry per proxy: the first is what the proxy nearest the browser saw. `next start`
 * fills it in from Host when no proxy did.
 *
 * It is read whatever the client-address setting says: the threat here is a page in the
 * victim's browser, and a cross-site page cannot send X-Forwarded-Host (a custom header
 * needs a CORS preflight, which this app never grants). A client that sends it directly
 * has no victim's cookie to abuse. Ignoring it without a trusted proxy would only refuse
 * the own pages of a deployment behind a proxy that rewrites Host.
 */
function publicHostOf(headers: Headers): string | undefined {
  const forwarded = headers.get('x-forwarded-host')?.split(',')[0]?.trim();
  const host = forwarded || headers.get('host')?.trim();
  // Only a host[:port]: anything the URL parser would read as a path or user name is no host.
  return host && /^[^\s/\\?#@]+$/.test(host) ? host : undefined;
}
