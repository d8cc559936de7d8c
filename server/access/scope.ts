import type { Database } from '@/db/client';
import type { CallerScope } from '@/db/queries/access';
import { selectMemberships, type Membership } from '@/db/queries/memberships';
import { AppError } from '@/server/errors';

export type { CallerScope } from '@/db/queries/access';

/**
 * What a user may see, read at request time (a membership removed now is gone on the next
 * request): the one place a scope is built, for API keys, calendar feeds and the pages.
 * The organisations come with their names, for the pages that show them.
 */
export async function loadScope(db: Database, userId: string): Promise<{ scope: CallerScope; organizations: Membership[] }> {
  const organizations = await selectMemberships(db, userId);
  return { scope: { userId, organizationIds: organizations.map((o) => o.id) }, organizations };
}

/** An organisation filter names one of the caller's organisations, or it is a 403 (api-decisions.md). */
export function assertMemberOf(scope: CallerScope, organizationId: string | undefined): void {
  if (organizationId !== undefined && !scope.organizationIds.includes(organizationId)) {
    throw new AppError('forbidden', 'You are not a member of this organisation.', [
      { param: 'organization_id', message: 'You are not a member of this organisation.' },
    ]);
  }
}
