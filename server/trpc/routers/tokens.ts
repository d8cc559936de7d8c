import { z } from 'zod';
import { feedUrlOf, webcalUrlOf } from '@/lib/calendar';
import { API_KEY_EXPIRY_CHOICES, DEFAULT_API_KEY_EXPIRY, TOKEN_NAME_MAX_LENGTH, type TokenKind, type TokenSummary } from '@/lib/tokens';
import { createToken, listTokens, revokeToken } from '@/server/access/tokens';
import { validatedPublicOrigin } from '@/server/http/public-origin';
import { protectedProcedure, router, verifiedProcedure } from '../init';

type Created = { secret: string; token: TokenSummary };

/**
 * The settings pages' management of one kind of token, for the signed-in user (the app's
 * own endpoint; not in the OpenAPI document): list, create (the secret is returned once,
 * as `reveal` presents it), revoke.
 */
function tokensRouter<Input extends { name: string; expiresInDays?: number | null }, Revealed>(
  kind: TokenKind,
  createInput: z.ZodType<Input>,
  reveal: (created: Created, headers: Headers) => Revealed,
) {
  return router({
    list: protectedProcedure.query(({ ctx }) => listTokens(ctx.db, kind, ctx.user.id)),
    // Not before the address is verified (server/auth/verification.ts).
    create: verifiedProcedure
      .input(createInput)
      .mutation(async ({ ctx, input }) => reveal(await createToken(ctx.db, kind, ctx.user.id, input), ctx.headers)),
    revoke: protectedProcedure
      .input(z.object({ id: z.guid() }))
      .mutation(({ ctx, input }) => revokeToken(ctx.db, kind, ctx.user.id, input.id)),
  });
}

const name = z.string().trim().min(1, 'Enter a name.').max(TOKEN_NAME_MAX_LENGTH, `At most ${TOKEN_NAME_MAX_LENGTH} characters.`);

export const apiKeysRouter = tokensRouter(
  'api_key',
  z.object({
    name,
    // Only API keys expire: the choices of the settings page, in days (null: never).
    expiresInDays: z
      .literal(API_KEY_EXPIRY_CHOICES.filter((days) => days !== null))
      .nullable()
      .default(DEFAULT_API_KEY_EXPIRY),
  }),
  (created) => created,
);

/** A feed's token is shown once, inside the feed's addresses (https and webcal). */
export const calendarFeedsRouter = tokensRouter('calendar_feed', z.object({ name }), (created, headers) => {
  const url = feedUrlOf(validatedPublicOrigin(headers), created.secret);
  return { ...created, url, webcalUrl: webcalUrlOf(url) };
});
