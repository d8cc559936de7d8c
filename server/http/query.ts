import { AppError, type ErrorDetail } from '@/server/errors';

/**
 * Unknown query parameters are refused, as Stripe refuses them: a typo (`stauts=active`)
 * must not silently widen a query. The answer names the parameter, suggests the one that
 * was probably meant, and lists those the endpoint takes.
 *
 * Nothing a browser or a proxy adds on its own is a query parameter (they add headers);
 * what a page or a tool adds (`utm_source`, a cache-buster such as jQuery's `_=…`) is
 * named in the same 400. For cache-busting there is no need anyway: no shared cache keeps
 * an API answer, and a client's own cache revalidates every time.
 */

/** The 400 detail of one unknown parameter. */
export function unknownParameterDetail(name: string, allowed: readonly string[], hint?: string): ErrorDetail {
  const shown = name.length > 100 ? `${name.slice(0, 100)}…` : name;
  const guess = closest(name, allowed);
  const suggestion = guess ? ` Did you mean ${guess}?` : '';
  const list = allowed.length > 0 ? ` Allowed parameters: ${allowed.join(', ')}.` : hint ? ` ${hint}` : ' This endpoint takes no query parameters.';
  return { param: shown, message: `Unknown query parameter ${shown}.${suggestion}${list}` };
}

/** Throws the 400 when the URL's query names a parameter outside `allowed`. */
export function rejectQueryParameters(url: string, allowed: readonly string[], hint?: string): void {
  const unknown = [...new Set(new URL(url).searchParams.keys())].filter((name) => !allowed.includes(name));
  if (unknown.length === 0) return;
  const details = unknown.slice(0, 10).map((name) => unknownParameterDetail(name, allowed, hint));
  throw new AppError('invalid_request', details.map((d) => d.message).join(' '), details);
}

/** The allowed name within two edits of `name` (a typo, a transposition), if one is. */
function closest(name: string, allowed: readonly string[]): string | undefined {
  if (name.length > 64) return undefined;
  let best: { name: string; distance: number } | undefined;
  for (const candidate of allowed) {
    const distance = editDistance(name.toLowerCase(), candidate);
    if (distance <= 2 && (!best || distance < best.distance)) best = { name: candidate, distance };
  }
  return best?.name;
}

/** Optimal string alignment distance: insertions, deletions, substitutions, adjacent swaps. */
function editDistance(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) d[0]![j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let value = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) value = Math.min(value, d[i - 2]![j - 2]! + 1);
      d[i]![j] = value;
    }
  }
  return d[a.length]![b.length]!;
}
