import { z } from 'zod';
import { STATUS_CLASSES } from '@/lib/key-activity';
import { findRequest, keyRequests, keyUsage } from '@/server/usage/service';
import { protectedProcedure, router } from '../init';

/**
 * What the signed-in person's keys did (the key's settings page): usage by hour and day,
 * the request log, a request found by its id. No public REST endpoint yet.
 */
export const keyActivityRouter = router({
  usage: protectedProcedure.input(z.object({ keyId: z.guid('keyId must be a key id (a UUID).') })).query(({ ctx, input }) => keyUsage(ctx.db, ctx.user.id, input.keyId)),
  requests: protectedProcedure
    .input(
      z.object({
        keyId: z.guid('keyId must be a key id (a UUID).'),
        statusClass: z.enum(STATUS_CLASSES, { message: `statusClass must be one of ${STATUS_CLASSES.join(', ')}.` }).optional(),
        cursor: z.string().max(64, 'cursor is not one this page gave.').optional(),
      }),
    )
    .query(({ ctx, input }) => keyRequests(ctx.db, ctx.user.id, input)),
  findRequest: protectedProcedure
    .input(z.object({ requestId: z.string().max(100, 'A request id is "req_" followed by 32 hexadecimal digits.') }))
    .query(({ ctx, input }) => findRequest(ctx.db, ctx.user.id, input.requestId)),
});
