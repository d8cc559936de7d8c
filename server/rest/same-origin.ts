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
  if (origin) {
    const host = req.headers.get('x-forwarded-host') ?? req.headers.get('host');
    try {
      return new URL(origin).host === host;
    } catch {
      return false;
    }
  }
  return true;
}
