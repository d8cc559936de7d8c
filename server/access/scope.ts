import type { Database } from '@/db/client';
import { NO_USER, scopeReaches, type CallerScope } from '@/db/queries/access';
import { selectMemberships, type Membership } from '@/db/queries/memberships';
import { selectEndpointScope, selectTokenScope } from '@/db/queries/token-scope';
import { AppError } from '@/server/errors';

export type { CallerScope } from '@/db/queries/access';

/**
 * What a user may see, read at request time (a membership removed now is gone on the next
 * request): the scope of the pages, which act for the signed-in user. The organisations
 * come with their names, for the pages that show them.
 */
export async function loadScope(db: Database, userId: string): Promise<{ scope: CallerScope; organizations: Membership[] }> {
  const organizations = await selectMemberships(db, userId);
  return { scope: { userId, organizationIds: organizations.map((o) => o.id) }, organizations };
}

/** A token's scope and what it may do, read at request time (db/queries/token-scope.ts). */
export interface TokenScope {
  scope: CallerScope;
  permissions: string[];
  allowedAddresses: string[];
  /** The organisation that owns the key; null for a person's key. */
  ownerOrganizationId: string | null;
}

/**
 * The scope of a token (API key, calendar feed): its owner's memberships of now, narrowed
 * by the token's access, the organisations' policy and "remove access"; an organisation's
 * own key reaches that organisation alone. One statement by primary key, no cache: an
 * edit, a removal or a policy change applies to the next request on every instance.
 * Undefined when the token row is gone.
 */
export async function loadTokenScope(db: Database, tokenId: string): Promise<TokenScope | undefined> {
  const row = await selectTokenScope(db, tokenId);
  if (!row) return undefined;
  return {
    scope: { userId: row.userId ?? NO_USER, personal: row.personal, organizationIds: row.organizationIds, tokenId },
    permissions: row.permissions,
    allowedAddresses: row.allowedAddresses,
    ownerOrganizationId: row.ownerOrganizationId,
  };
}

/** The scope of a webhook endpoint at delivery: its owner's, narrowed by its access and the organisations' policy. */
export async function loadEndpointScope(db: Database, endpointId: string): Promise<CallerScope | undefined> {
  const row = await selectEndpointScope(db, endpointId);
  return row && { userId: row.userId, personal: row.personal, organizationIds: row.organizationIds };
}

/** An organisation filter names one of the caller's organisations, or it is a 403 (docs/api-decisions.md). */
export function assertMemberOf(scope: CallerScope, organizationId: string | undefined): void {
  if (organizationId !== undefined && !scopeReaches(scope, organizationId)) {
    throw new AppError('forbidden', 'You are not a member of this organisation.', [
      { param: 'organization_id', message: 'You are not a member of this organisation.' },
    ]);
  }
}
