/**
 * A connection string as postgres.js should read it. postgres.js sends every query
 * parameter of the URL that it does not know itself to the server as a startup
 * parameter. libpq's client-side keywords are not server settings: Postgres closes the
 * connection ("unrecognized configuration parameter"), and a pooler refuses it
 * ("unsupported startup parameter"). Neon writes `channel_binding=require` into the URLs
 * it gives out, including DATABASE_URL and DATABASE_URL_UNPOOLED through Vercel's
 * integration, so every connection failed. These keywords are dropped; the ones
 * postgres.js reads itself (sslmode, sslrootcert, target_session_attrs, connect_timeout...)
 * and real settings (application_name, options) are kept.
 *
 * postgres.js cannot bind channels (SCRAM-SHA-256-PLUS) anyway: with
 * `channel_binding=require` dropped, the server is authenticated by TLS as `sslmode` says.
 */

// libpq's connection keywords (PostgreSQL 18, "Parameter Key Words") that configure the
// client only and that postgres.js neither reads nor may forward.
const LIBPQ_CLIENT_ONLY = new Set([
  'channel_binding',
  'require_auth',
  'gssencmode',
  'gsslib',
  'gssdelegation',
  'krbsrvname',
  'sslcert',
  'sslkey',
  'sslpassword',
  'sslcertmode',
  'sslcrl',
  'sslcrldir',
  'sslsni',
  'sslcompression',
  'sslkeylogfile',
  'ssl_min_protocol_version',
  'ssl_max_protocol_version',
  'min_protocol_version',
  'max_protocol_version',
  'requirepeer',
  'keepalives',
  'keepalives_idle',
  'keepalives_interval',
  'keepalives_count',
  'tcp_user_timeout',
  'hostaddr',
  'passfile',
  'service',
  'load_balance_hosts',
  'fallback_application_name',
]);

/**
 * The URL without libpq's client-only keywords. Only the query string is rewritten: the
 * rest (multi-host lists, encoded passwords) stays byte for byte as postgres.js parses it.
 */
export function postgresJsUrl(url: string): string {
  const queryStart = url.indexOf('?');
  if (queryStart === -1) return url;
  const hashStart = url.indexOf('#', queryStart);
  const query = url.slice(queryStart + 1, hashStart === -1 ? undefined : hashStart);
  const kept = query.split('&').filter((pair) => pair !== '' && !LIBPQ_CLIENT_ONLY.has(keyOf(pair)));
  if (kept.length === query.split('&').filter((pair) => pair !== '').length) return url;
  return `${url.slice(0, queryStart)}${kept.length > 0 ? `?${kept.join('&')}` : ''}${hashStart === -1 ? '' : url.slice(hashStart)}`;
}

function keyOf(pair: string): string {
  const key = pair.split('=')[0]!;
  try {
    return decodeURIComponent(key);
  } catch {
    return key;
  }
}
