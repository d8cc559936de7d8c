import { z } from 'zod';
import { selectMemberships } from '@/db/queries/memberships';
import { feedUrlOf, MAX_NOTICE_REMINDER_DAYS, webcalUrlOf } from '@/lib/calendar';
import { API_KEY_EXPIRY_CHOICES, DEFAULT_API_KEY_EXPIRY, TOKEN_NAME_MAX_LENGTH } from '@/lib/tokens';
import { accessInput, allowedAddressesInput, graceHoursInput, keyOwnerInput, permissionsInput } from '@/server/access/key-inputs';
import {
  createApiKey,
  createCalendarFeed,
  editKeyRestrictions,
  listOrganizationKeys,
  organizationPolicy,
  removeKeyAccess,
  revokeKey,
  rollKey,
  setOrganizationPolicy,
} from '@/server/access/keys';
import { listTokens, revokeToken } from '@/server/access/tokens';
import { validatedPublicOrigin } from '@/server/http/public-origin';
import { protectedProcedure, router, verifiedProcedure } from '../init';

/**
 * The settings pages' management of tokens, for the signed-in user (the app's own
 * endpoint; not in the OpenAPI document). Secrets are returned once, by `create` and
 * `roll`. docs/keys.md lists the procedures and their inputs.
 */

const name = z.string().trim().min(1, 'Enter a name.').max(TOKEN_NAME_MAX_LENGTH, `At most ${TOKEN_NAME_MAX_LENGTH} characters.`);
const byId = z.object({ id: z.guid() });
const byOrganization = z.object({ organizationId: z.guid() });

export const apiKeysRouter = router({
  /** The user's own personal keys, with their restrictions (`restrictions`: short readable form; `removedFrom`: why an organisation no longer reads). */
  list: protectedProcedure.query(({ ctx }) => listTokens(ctx.db, 'api_key', ctx.user.id)),
  /** The user's organisations with their role (the create dialog: access choices, and owner choices where owner/admin). */
  organizations: protectedProcedure.query(({ ctx }) => selectMemberships(ctx.db, ctx.user.id)),
  // Not before the address is verified (server/auth/verification.ts).
  create: verifiedProcedure
    .input(
      z.object({
        name,
        // The choices of the settings page, in days (null: never).
        expiresInDays: z
          .literal(API_KEY_EXPIRY_CHOICES.filter((days) => days !== null))
          .nullable()
          .default(DEFAULT_API_KEY_EXPIRY),
        owner: keyOwnerInput.default({ kind: 'user' }),
        access: accessInput.optional(),
        permissions: permissionsInput.optional(),
        allowedAddresses: allowedAddressesInput.optional(),
      }),
    )
    .mutation(({ ctx, input }) => createApiKey(ctx.db, ctx.user.id, input)),
  /** Fields left out stay as they are. Own keys, and keys of organisations the user owns or administers. */
  editRestrictions: protectedProcedure
    .input(z.object({ id: z.guid(), access: accessInput.optional(), permissions: permissionsInput.optional(), allowedAddresses: allowedAddressesInput.optional() }))
    .mutation(({ ctx, input }) => editKeyRestrictions(ctx.db, ctx.user.id, input)),
  /** A new secret for the same key; the old one works for graceHours more (0, 1, 24 or 168). */
  roll: protectedProcedure
    .input(z.object({ id: z.guid(), graceHours: graceHoursInput }))
    .mutation(({ ctx, input }) => rollKey(ctx.db, ctx.user.id, input.id, input.graceHours)),
  revoke: protectedProcedure.input(byId).mutation(({ ctx, input }) => revokeKey(ctx.db, ctx.user.id, input.id)),
});

/** An organisation's oversight of the keys that read its contracts: for its owners and admins only. */
export const organizationKeysRouter = router({
  list: protectedProcedure.input(byOrganization).query(({ ctx, input }) => listOrganizationKeys(ctx.db, ctx.user.id, input.organizationId)),
  /** A member's personal key loses this organisation (nothing else of it changes). */
  removeAccess: protectedProcedure
    .input(z.object({ organizationId: z.guid(), id: z.guid() }))
    .mutation(async ({ ctx, input }) => {
      await removeKeyAccess(ctx.db, ctx.user.id, input.organizationId, input.id);
      return { ok: true as const };
    }),
  policy: protectedProcedure.input(byOrganization).query(({ ctx, input }) => organizationPolicy(ctx.db, ctx.user.id, input.organizationId)),
  setPolicy: protectedProcedure
    .input(z.object({ organizationId: z.guid(), memberKeysAllowed: z.boolean() }))
    .mutation(({ ctx, input }) => setOrganizationPolicy(ctx.db, ctx.user.id, input.organizationId, input.memberKeysAllowed)),
});

/** A feed's token is shown once, inside the feed's addresses (https and webcal). */
export const calendarFeedsRouter = router({
  list: protectedProcedure.query(({ ctx }) => listTokens(ctx.db, 'calendar_feed', ctx.user.id)),
  create: verifiedProcedure
    .input(z.object({ name, access: accessInput.optional(), noticeReminderDays: z.int().min(0).max(MAX_NOTICE_REMINDER_DAYS).optional() }))
    .mutation(async ({ ctx, input }) => {
    const created = await createCalendarFeed(ctx.db, ctx.user.id, input);
    const url = feedUrlOf(validatedPublicOrigin(ctx.headers), created.secret);
    return { ...created, url, webcalUrl: webcalUrlOf(url) };
  }),
  setAccess: protectedProcedure
    .input(z.object({ id: z.guid(), access: accessInput }))
    .mutation(({ ctx, input }) => editKeyRestrictions(ctx.db, ctx.user.id, input, 'calendar_feed')),
  revoke: protectedProcedure.input(byId).mutation(({ ctx, input }) => revokeToken(ctx.db, 'calendar_feed', ctx.user.id, input.id)),
});
