import 'server-only';
import type { SessionUser } from '@/server/auth/session';
import { getDb } from '@/server/database';
import { listEndpoints, type EndpointSummary } from './endpoints';

/** What Settings → Webhooks lists for the signed-in user. */
export async function webhooksPage(user: SessionUser): Promise<EndpointSummary[]> {
  return listEndpoints(await getDb(), user.id);
}
