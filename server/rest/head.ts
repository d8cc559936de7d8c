/**
 * HEAD for a GET handler: the same status and headers, no body. (Without it, HEAD would
 * reach trpc-to-openapi, which answers any HEAD with an empty 204.)
 */
export function headOf(handler: (req: Request) => Promise<Response>) {
  return async (req: Request): Promise<Response> => {
    const res = await handler(new Request(req.url, { method: 'GET', headers: req.headers }));
    await res.body?.cancel();
    return new Response(null, { status: res.status, statusText: res.statusText, headers: res.headers });
  };
}
