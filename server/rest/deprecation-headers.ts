import { publicOrigin } from '@/server/http/public-origin';
import { changelogUrl } from './changelog';
import { DEPRECATIONS, type Deprecation } from './deprecations';
import { buildOpenApiDocument } from './openapi-document';
import { deprecationsByOperation, type OperationDeprecations } from './openapi-deprecations';

/**
 * The deprecation headers of an answer (docs/api-changes.md): when a request used
 * something ./deprecations.ts lists, its answer carries
 *
 *   Deprecation: @<Unix time of the announcement>     RFC 9745 (structured-field date)
 *   Sunset: <HTTP date of the sunset>                  RFC 8594
 *   Link: <https://…/docs/changelog#anchor>; rel="deprecation"
 *
 * Used twice: the router adds them to every answer of an operation after it is made (query
 * parameters it sees in the URL, fields of the operation's answers), and the export adds
 * those of its body's fields, which only it reads. A request that used several gets the
 * earliest announcement and the earliest sunset, and one link per deprecation.
 */

const NONE: OperationDeprecations = { query: [], body: [], always: [] };
let byOperation: Map<string, OperationDeprecations> | undefined;

/** What an operation's answers may carry, read from the document once per process (nothing to read while nothing is deprecated). */
function deprecationsOf(operationId: string): OperationDeprecations {
  if (DEPRECATIONS.length === 0) return NONE;
  byOperation ??= deprecationsByOperation(buildOpenApiDocument(''), DEPRECATIONS);
  return byOperation.get(operationId) ?? NONE;
}

/**
 * The deprecations a request used: the operation's answers' fields and the query
 * parameters in its `url`, or the fields of its body. Nothing is parsed while the
 * operation has nothing deprecated (every request of the API asks).
 */
export function usedDeprecations(operationId: string, sent: { url?: string; body?: readonly string[] }): Deprecation[] {
  const of = deprecationsOf(operationId);
  if (of === NONE) return [];
  const query = of.query.length > 0 && sent.url ? new URL(sent.url).searchParams : undefined;
  return [...of.always, ...of.query.filter((d) => query?.has(d.name)), ...of.body.filter((d) => sent.body?.includes(d.name))];
}

const unixSeconds = (day: string) => Date.parse(`${day}T00:00:00Z`) / 1000;

/** The public origin for the changelog links, as every absolute link of the API; the request's own when the headers do not make one. */
export function linkOrigin(headers: Headers, url: string): string {
  try {
    return new URL(publicOrigin(headers)).origin;
  } catch {
    return new URL(url).origin;
  }
}

/** Adds the headers of `used` to `headers`, merging with those an earlier step added. */
export function addDeprecationHeaders(headers: Headers, used: readonly Deprecation[], origin: string): void {
  if (used.length === 0) return;
  const previous = /^@(-?\d+)$/.exec(headers.get('Deprecation') ?? '')?.[1];
  const announced = Math.min(...used.map((d) => unixSeconds(d.announced)), previous === undefined ? Infinity : Number(previous));
  const previousSunset = Date.parse(headers.get('Sunset') ?? '');
  const sunset = Math.min(...used.map((d) => unixSeconds(d.sunset) * 1000), Number.isNaN(previousSunset) ? Infinity : previousSunset);
  headers.set('Deprecation', `@${announced}`);
  headers.set('Sunset', new Date(sunset).toUTCString());
  const links = headers.get('Link') ?? '';
  for (const url of new Set(used.map((d) => changelogUrl(origin, d.changelog)))) {
    if (!links.includes(`<${url}>`)) headers.append('Link', `<${url}>; rel="deprecation"`);
  }
}
