import { z } from 'zod';
import { DEFAULT_EXPIRY, NAME_MAX_LENGTH } from '@/server/api-keys/constants';
import { createApiKey, listApiKeys, revokeApiKey } from '@/server/api-keys/service';
import { protectedProcedure, router } from '../init';

/** Key management for the signed-in user (the app's own endpoint; not in the OpenAPI document). */
export const apiKeysRouter = router({
  list: protectedProcedure.query(({ ctx }) => listApiKeys(ctx.db, ctx.user.id)),

  create: protectedProcedure
    .input(
      z.object({
        name: z
          .string()
          .trim()
          .min(1, 'Enter a name.')
          .max(NAME_MAX_LENGTH, `At most ${NAME_MAX_LENGTH} characters.`),
        expiresInDays: z
          .union([z.literal(7), z.literal(30), z.literal(90), z.literal(365), z.null()])
          .default(DEFAULT_EXPIRY),
      }),
    )
    .mutation(({ ctx, input }) => createApiKey(ctx.db, ctx.user.id, input)),

  revoke: protectedProcedure
    .input(z.object({ id: z.guid() }))
    .mutation(({ ctx, input }) => revokeApiKey(ctx.db, ctx.user.id, input.id)),
});
