import 'server-only';
import { selectMemberships, type Membership } from '@/db/queries/memberships';
import type { TokenDetails, TokenKind } from '@/lib/tokens';
import type { SessionUser } from '@/server/auth/session';
import { getDb } from '@/server/database';
import { AppError } from '@/server/errors';
import { listOrganizationKeys, type OrganizationKeys } from './keys';
import { listTokens } from './tokens';

/** What the settings pages of API keys and calendar feeds list for the signed-in user. */
export async function tokensPage(user: SessionUser, kind: TokenKind): Promise<TokenDetails[]> {
  return listTokens(await getDb(), kind, user.id);
}

/** The user's organisations with their role: the access choices of the dialogs, and the organisation pages they may open. */
export async function organizationsOf(user: SessionUser): Promise<Membership[]> {
  return selectMemberships(await getDb(), user.id);
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * An organisation's page of keys, for its owners and admins; undefined (the page answers
 * 404) for anyone else, members included, and for an id that is no organisation: a member
 * learns nothing of the organisation's keys, not even that the page exists.
 */
export async function organizationKeysPage(user: SessionUser, organizationId: string): Promise<OrganizationKeys | undefined> {
  if (!UUID.test(organizationId)) return undefined;
  try {
    return await listOrganizationKeys(await getDb(), user.id, organizationId);
  } catch (e) {
    if (e instanceof AppError && e.code === 'forbidden') return undefined;
    throw e;
  }
}
