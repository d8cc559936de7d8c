import { z } from 'zod';
import { assertOrganizationAdmin } from '@/server/access/keys';
import { securityLogPage } from '@/server/security-log/service';
import { protectedProcedure, router } from '../init';

/** The query of a log page: kinds, a time range, the cursor (validated by the service, which names a bad one). */
export const securityLogQuery = z.object({
  kinds: z.array(z.string().max(64)).max(32).optional(),
  from: z.string().max(40).optional(),
  to: z.string().max(40).optional(),
  cursor: z.string().max(64, 'cursor is not one this log gave.').optional(),
});

/**
 * Settings → Security log: the signed-in person's own events; `organization`: every event
 * about an organisation's keys and policy, for its owners and admins (FORBIDDEN otherwise).
 */
export const securityLogRouter = router({
  own: protectedProcedure.input(securityLogQuery).query(({ ctx, input }) => securityLogPage(ctx.db, { userId: ctx.user.id }, input)),
  organization: protectedProcedure.input(securityLogQuery.extend({ organizationId: z.guid('organizationId must be an organisation id (a UUID).') })).query(async ({ ctx, input }) => {
    await assertOrganizationAdmin(ctx.db, ctx.user.id, input.organizationId);
    const { organizationId, ...query } = input;
    return securityLogPage(ctx.db, { organizationId }, query);
  }),
});
