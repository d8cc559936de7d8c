import { z } from 'zod';
import { FEED_NAME_MAX_LENGTH } from '@/server/calendar/constants';
import { createCalendarFeed, feedOriginOf, listCalendarFeeds, revokeCalendarFeed } from '@/server/calendar/service';
import { protectedProcedure, router } from '../init';

/** Calendar feeds of the signed-in user (the app's own endpoint; not in the OpenAPI document). */
export const calendarFeedsRouter = router({
  list: protectedProcedure.query(({ ctx }) => listCalendarFeeds(ctx.db, ctx.user.id)),

  /** Returns the feed's URL, with its token: shown once, never again. */
  create: protectedProcedure
    .input(
      z.object({
        name: z
          .string()
          .trim()
          .min(1, 'Enter a name.')
          .max(FEED_NAME_MAX_LENGTH, `At most ${FEED_NAME_MAX_LENGTH} characters.`),
      }),
    )
    .mutation(({ ctx, input }) => createCalendarFeed(ctx.db, ctx.user.id, input, feedOriginOf(ctx.headers))),

  revoke: protectedProcedure
    .input(z.object({ id: z.guid() }))
    .mutation(({ ctx, input }) => revokeCalendarFeed(ctx.db, ctx.user.id, input.id)),
});
