import 'server-only';
import { enforceRateLimit } from '@/server/access/rate-limit';
import { sameSecret } from '@/server/access/shared-secret';
import { config } from '@/server/config';
import { getDatabase } from '@/server/database';
import { AppError, toAppError } from '@/server/errors';
import { clientAddressOf } from '@/server/http/client-address';
import { apiHeaders, errorResponse, newRequestId, textResponse } from '@/server/http/responses';
import { WebhookWorker, type PassResult } from './worker';

/**
 * GET /api/cron/webhooks: Vercel Cron (vercel.json) drains the webhook queue where no
 * worker runs in process. Vercel sends `Authorization: Bearer $CRON_SECRET`; anything else
 * is a 401 that counts against the client address like a bad API key. Without CRON_SECRET
 * the route does not exist (404). One call runs passes for at most DRAIN_BUDGET_MS, within
 * the function's 60 s (`maxDuration` in app/api/cron/webhooks/route.ts).
 */
const DRAIN_BUDGET_MS = 45_000;

export async function handleCronRequest(req: Request): Promise<Response> {
  const requestId = newRequestId();
  const headers = apiHeaders(requestId);
  const secret = config().webhooks.cronSecret;
  if (!secret) return errorResponse(new AppError('not_found', 'No such endpoint.'), requestId, headers);
  const presented = /^Bearer (.+)$/.exec(req.headers.get('authorization') ?? '')?.[1] ?? '';
  if (!sameSecret(presented, secret)) {
    try {
      const clientAddress = clientAddressOf(req.headers);
      await enforceRateLimit({ setHeader: (name, value) => headers.set(name, value) }, 'auth_failure', clientAddress, { headers: false });
    } catch (error) {
      return errorResponse(toAppError(error, requestId), requestId, headers);
    }
    return errorResponse(new AppError('unauthorized', 'Missing or invalid cron secret.'), requestId, headers);
  }
  try {
    const worker = new WebhookWorker({ handle: await getDatabase() });
    const until = Date.now() + DRAIN_BUDGET_MS;
    const total: PassResult = { fannedOut: 0, attempted: 0, succeeded: 0, upcomingQueued: 0, mailSent: 0 };
    do {
      const pass = await worker.runOnce({ until });
      for (const key of Object.keys(total) as (keyof PassResult)[]) total[key] += pass[key];
      if (pass.fannedOut === 0 && pass.attempted === 0 && pass.mailSent === 0) break;
    } while (Date.now() < until);
    headers.set('Content-Type', 'application/json; charset=utf-8');
    return textResponse(JSON.stringify({ success: true, data: total }), 200, headers);
  } catch (error) {
    return errorResponse(toAppError(error, requestId), requestId, headers);
  }
}
