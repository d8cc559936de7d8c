import { z } from 'zod';
import { enforceRateLimit } from '@/server/access/rate-limit';
import {
  createEndpoint,
  createEndpointInput,
  deleteEndpoint,
  deliveryLog,
  listEndpoints,
  pauseEndpoint,
  resendDelivery,
  resumeEndpoint,
  rotateSecret,
  sendTestEvent,
  setEndpointAccess,
} from '@/server/webhooks/endpoints';
import { accessInput } from '@/server/access/key-inputs';
import { protectedProcedure, router } from '../init';

const byId = z.object({ id: z.guid() });

/**
 * Settings → Webhooks, for the signed-in user (the app's own endpoint; not in the OpenAPI
 * document). Secrets are returned once, by `create` and `rotateSecret`. Test events and
 * resends make this server send a request to an address the user chose: they count in the
 * user's `webhook_manual` limit.
 */
export const webhooksRouter = router({
  list: protectedProcedure.query(({ ctx }) => listEndpoints(ctx.db, ctx.user.id)),
  create: protectedProcedure.input(createEndpointInput).mutation(({ ctx, input }) => createEndpoint(ctx.db, ctx.user.id, input)),
  delete: protectedProcedure.input(byId).mutation(({ ctx, input }) => deleteEndpoint(ctx.db, ctx.user.id, input.id)),
  pause: protectedProcedure.input(byId).mutation(({ ctx, input }) => pauseEndpoint(ctx.db, ctx.user.id, input.id)),
  resume: protectedProcedure.input(byId).mutation(({ ctx, input }) => resumeEndpoint(ctx.db, ctx.user.id, input.id)),
  /** Which contracts it hears of: everything, or the chosen set (docs/keys.md). */
  setAccess: protectedProcedure
    .input(z.object({ id: z.guid(), access: accessInput }))
    .mutation(({ ctx, input }) => setEndpointAccess(ctx.db, ctx.user.id, input.id, input.access)),
  rotateSecret: protectedProcedure.input(byId).mutation(({ ctx, input }) => rotateSecret(ctx.db, ctx.user.id, input.id)),
  sendTest: protectedProcedure.input(byId).mutation(async ({ ctx, input }) => {
    await enforceRateLimit(ctx, 'webhook_manual', ctx.user.id, { headers: false });
    return sendTestEvent(ctx.db, ctx.user.id, input.id);
  }),
  deliveries: protectedProcedure.input(z.object({ endpointId: z.guid() })).query(({ ctx, input }) => deliveryLog(ctx.db, ctx.user.id, input.endpointId)),
  resend: protectedProcedure.input(z.object({ deliveryId: z.guid() })).mutation(async ({ ctx, input }) => {
    await enforceRateLimit(ctx, 'webhook_manual', ctx.user.id, { headers: false });
    return resendDelivery(ctx.db, ctx.user.id, input.deliveryId);
  }),
});
