import type { RequestContext } from './context';
import { publicOrigin } from './public-origin';

/**
 * A `Link` header value (RFC 8288) for the same request with some query parameters
 * changed, as an absolute URL on the public origin: what clients that follow `rel="next"`
 * expect (GitHub writes them so).
 */
export function linkTo(ctx: Pick<RequestContext, 'url' | 'headers'>, rel: string, changes: Record<string, string | undefined>): string {
  const url = new URL(ctx.url);
  for (const [name, value] of Object.entries(changes)) {
    if (value === undefined) url.searchParams.delete(name);
    else url.searchParams.set(name, value);
  }
  return `<${publicOrigin(ctx.headers)}${url.pathname}${url.search}>; rel="${rel}"`;
}
