import type { ReadinessReport } from '@/server/health/types';

/**
 * An instance's readiness as it answers it itself (GET /api/health/ready on its own port,
 * not through the balancer), in one line for `npm run cluster -- status`.
 */
export type InstanceReadiness = { answered: true; httpStatus: number; report: ReadinessReport } | { answered: false; error: string };

export async function instanceReadiness(port: number, timeoutMs = 3_000): Promise<InstanceReadiness> {
  try {
    const res = await fetch(`http://127.0.0.1:${port}/api/health/ready`, { signal: AbortSignal.timeout(timeoutMs) });
    return { answered: true, httpStatus: res.status, report: (await res.json()) as ReadinessReport };
  } catch (error) {
    const e = error as Error & { cause?: { code?: string } };
    return { answered: false, error: e.name === 'TimeoutError' ? `no answer in ${timeoutMs} ms` : (e.cause?.code ?? e.message) };
  }
}

/** "ok", "degraded: replica (unreachable)", "unavailable (503): rate_limit_store (ECONNREFUSED)", "no answer…". */
export function describeReadiness(r: InstanceReadiness): string {
  if (!r.answered) return `not answering (${r.error})`;
  const { status, checks } = r.report;
  const notes = Object.entries(checks)
    .filter(([, part]) => part.status === 'failing' || part.status === 'degraded')
    .map(([name, part]) => `${name} (${('error' in part && part.error) || ('reason' in part && part.reason) || part.status})`);
  const head = status === 'unavailable' ? `unavailable (${r.httpStatus})` : status;
  return notes.length > 0 ? `${head}: ${notes.join(', ')}` : head;
}
