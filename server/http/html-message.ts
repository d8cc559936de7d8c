/**
 * A short HTML page that answers a browser navigation which cannot show the app's own
 * pages: the contracts page's CSV download is a route, not a page, and when it cannot
 * deliver the file (the download limit, an unavailable database) the person sees this in
 * the tab instead of a JSON envelope or a failed download. Everything interpolated is
 * escaped; the styles are inline (the Content-Security-Policy allows inline styles).
 */
export interface HtmlMessage {
  status: number;
  title: string;
  message: string;
  /** Where to go back to (a path of this site). */
  back: { href: string; label: string };
  requestId: string;
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => ESCAPES[c]!);

export function htmlMessageResponse(page: HtmlMessage, headers: Headers): Response {
  const h = new Headers(headers);
  h.set('Content-Type', 'text/html; charset=utf-8');
  h.set('Cache-Control', 'no-store');
  h.set('X-Request-Id', page.requestId);
  const body = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(page.title)} · Contract Data API</title>
<style>
body { margin: 0; background: #f7f8fa; color: #111827; font: 15px/1.5 ui-sans-serif, system-ui, -apple-system, 'Segoe UI', Roboto, Arial, sans-serif; }
main { max-width: 560px; margin: 4rem auto; padding: 0 1rem; }
h1 { font-size: 1.4rem; margin: 0 0 0.5rem; }
p { margin: 0 0 1rem; overflow-wrap: anywhere; }
a { color: #3b5bdb; font-weight: 600; }
.muted { color: #5b6472; font-size: 0.85rem; }
</style>
</head>
<body>
<main>
<h1>${escapeHtml(page.title)}</h1>
<p>${escapeHtml(page.message)}</p>
<p><a href="${escapeHtml(page.back.href)}">${escapeHtml(page.back.label)}</a></p>
<p class="muted">Request id: ${escapeHtml(page.requestId)}</p>
</main>
</body>
</html>
`;
  return new Response(body, { status: page.status, headers: h });
}
