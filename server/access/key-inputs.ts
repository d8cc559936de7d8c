import { z } from 'zod';
import { MAX_ALLOWED_ADDRESSES, PERMISSIONS, ROLL_GRACE_CHOICES } from '@/lib/key-restrictions';

/**
 * The input schemas of the restrictions (docs/keys.md), shared by the app's procedures for
 * API keys, calendar feeds and webhook endpoints. They bound sizes only; the meaning
 * (an organisation the user is in, a known permission, a well-formed address, at most 20)
 * is checked by ./keys.ts, whose messages name the value at fault.
 */
export const accessInput = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('all') }),
  z.object({
    kind: z.literal('chosen'),
    personal: z.boolean(),
    organizationIds: z.array(z.guid()).max(200),
  }),
]);

export const permissionsInput = z
  .array(z.string().max(64))
  .max(PERMISSIONS.length * 4)
  .meta({ description: `Any of ${PERMISSIONS.join(', ')}; at least one.` });

export const allowedAddressesInput = z
  .array(z.string().max(100))
  .max(MAX_ALLOWED_ADDRESSES * 5)
  .meta({ description: `IPv4/IPv6 addresses and CIDR ranges, at most ${MAX_ALLOWED_ADDRESSES}; empty: any address.` });

export const keyOwnerInput = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('user') }),
  z.object({ kind: z.literal('organization'), organizationId: z.guid() }),
]);

export const graceHoursInput = z.literal([...ROLL_GRACE_CHOICES]);
