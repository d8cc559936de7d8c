import type { Access } from '@/lib/key-restrictions';
import type { TokenSummary } from '@/lib/tokens';

/** An organisation that removed a key's access, as the lists show it. */
export interface RemovalRow {
  organizationId: string;
  organizationName: string;
  removedAt: string;
  removedBy: string | null;
}

/**
 * A token as the settings pages show it (dates as ISO strings across the server/client
 * boundary). The restrictions (docs/keys.md) are there when the server sent them: API
 * keys and calendar feeds have them, older callers' summaries do not.
 */
export type TokenRow = Omit<TokenSummary, 'createdAt' | 'lastUsedAt' | 'expiresAt' | 'revokedAt'> & {
  createdAt: string;
  lastUsedAt: string | null;
  expiresAt: string | null;
  revokedAt: string | null;
  access?: Access;
  permissions?: string[];
  allowedAddresses?: string[];
  /** The short readable form: "access: personal, Acme · read · from 203.0.113.0/24". */
  restrictions?: string;
  /** After a roll: until when the previous secret still works. */
  previousExpiresAt?: string | null;
  removedFrom?: RemovalRow[];
  /** An organisation's key: the organisation's name. */
  organizationName?: string;
  /** A calendar feed: days before a notice deadline its reminder shows (null: the default). */
  noticeReminderDays?: number | null;
};

type Dated = Date | string | null;

type TokenInput = Omit<TokenSummary, 'createdAt' | 'lastUsedAt' | 'expiresAt' | 'revokedAt'> &
  Record<'createdAt' | 'lastUsedAt' | 'expiresAt' | 'revokedAt', Dated> & {
    access?: Access;
    permissions?: string[];
    allowedAddresses?: string[];
    restrictions?: string;
    previousExpiresAt?: Dated;
    removedFrom?: { organizationId: string; organizationName: string; removedAt: Date | string; removedBy: string | null }[];
    owner?: { kind: 'user' } | { kind: 'organization'; organizationName: string };
    noticeReminderDays?: number | null;
  };

const iso = (d: Dated) => (d === null ? null : new Date(d).toISOString());

export function toTokenRow(token: TokenInput): TokenRow {
  return {
    id: token.id,
    name: token.name,
    hint: token.hint,
    createdAt: iso(token.createdAt)!,
    lastUsedAt: iso(token.lastUsedAt),
    expiresAt: iso(token.expiresAt),
    revokedAt: iso(token.revokedAt),
    status: token.status,
    ...(token.access ? { access: token.access } : {}),
    ...(token.permissions ? { permissions: token.permissions } : {}),
    ...(token.allowedAddresses ? { allowedAddresses: token.allowedAddresses } : {}),
    ...(token.restrictions !== undefined ? { restrictions: token.restrictions } : {}),
    ...(token.previousExpiresAt !== undefined ? { previousExpiresAt: iso(token.previousExpiresAt) } : {}),
    ...(token.removedFrom
      ? { removedFrom: token.removedFrom.map((r) => ({ ...r, removedAt: iso(r.removedAt)! })) }
      : {}),
    ...(token.owner?.kind === 'organization' ? { organizationName: token.owner.organizationName } : {}),
    ...(token.noticeReminderDays !== undefined ? { noticeReminderDays: token.noticeReminderDays } : {}),
  };
}
