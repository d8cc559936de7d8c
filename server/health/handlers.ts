import 'server-only';
import { apiHeaders, newRequestId } from '@/server/http/responses';
import { processReadiness } from './readiness';

/**
 * GET and HEAD of /api/health (liveness) and /api/health/ready (readiness), for load
 * balancers and orchestrators (docs/operations.md, "Health checks"). No key, no rate
 * limit: liveness touches nothing, and readiness runs at most one check per second per
 * process however often it is asked.
 */

function json(body: unknown, status: number, method: string): Response {
  const headers = apiHeaders(newRequestId());
  headers.set('Content-Type', 'application/json; charset=utf-8');
  if (status === 503) headers.set('Retry-After', '1');
  return new Response(method === 'HEAD' ? null : JSON.stringify(body), { status, headers });
}

/** The process is up and serving HTTP: no database, no store, nothing that can be down elsewhere. */
export function handleLiveness(req: Request): Response {
  return json({ status: 'ok' }, 200, req.method);
}

/** Whether this instance should get traffic: 200 ok or degraded, 503 naming the failing parts. */
export async function handleReadiness(req: Request): Promise<Response> {
  const report = await processReadiness();
  return json(report, report.status === 'unavailable' ? 503 : 200, req.method);
}
