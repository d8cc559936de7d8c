import 'server-only';
import type { SearchParams } from '@/lib/contract-list-url';
import { loadScope } from '@/server/access/scope';
import type { SessionUser } from '@/server/auth/session';
import { config } from '@/server/config';
import { getDb, getReadDb } from '@/server/database';
import { utcToday } from '@/server/dates';
import { AppError } from '@/server/errors';
import { describeWindow } from './download';
import { parseListParams } from './list-params';
import { toContractFilters, toSort } from './query';
import { getContractInput } from './schemas';
import { getContract, listContractDetails } from './service';
import { contractTimeline } from './timeline';

/**
 * What the contracts pages show the signed-in user: the same services, scope and
 * validation as the API, so the page and GET /api/v1/contracts agree on every list.
 */

/**
 * /contracts: the list for the URL's parameters (refused ones reported and dropped), the
 * next 12 months' chart, and the quota of its CSV download.
 */
export async function contractsPage(user: SessionUser, searchParams: SearchParams) {
  const { scope, organizations } = await loadScope(await getDb(), user.id);
  const db = await getReadDb();
  const params = parseListParams(searchParams, scope);
  const { input } = params;
  const today = utcToday();
  const [list, timeline] = await Promise.all([
    listContractDetails(db, scope, { filters: toContractFilters(input, today), sort: toSort(input.sort), limit: input.limit, offset: input.offset }),
    contractTimeline(db, scope, { organizationId: input.organization_id, today }),
  ]);
  const { limit, windowSeconds } = config().rateLimit.export;
  return { ...params, organizations, list, timeline, today, downloadQuota: { limit, window: describeWindow(windowSeconds) } };
}

/**
 * /contracts/{id}: one contract as GET /api/v1/contracts/{id} returns it to this user, with
 * its organisation's name. Undefined for an id that is malformed, unknown or another
 * account's: the same 404, as in the API.
 */
export async function contractPage(user: SessionUser, id: string) {
  const parsed = getContractInput.safeParse({ id });
  if (!parsed.success) return undefined;
  const { scope, organizations } = await loadScope(await getDb(), user.id);
  try {
    const contract = await getContract(await getReadDb(), scope, parsed.data.id);
    return { contract, organizationName: organizations.find((o) => o.id === contract.organization_id)?.name, today: utcToday() };
  } catch (error) {
    if (error instanceof AppError && error.code === 'not_found') return undefined;
    throw error;
  }
}
