import type { Database } from '@/db/client';
import { selectOrganizationNames } from '@/db/queries/memberships';
import { selectRemovalsOf, type TokenListRow } from '@/db/queries/tokens';
import { describeRestrictions, type Access } from '@/lib/key-restrictions';
import type { TokenDetails } from '@/lib/tokens';
import { statusOf } from './token-status';

/** A token's restrictions, checked (./keys.ts). */
export interface Restrictions {
  access: Access;
  permissions: string[];
  allowedAddresses: string[];
  /** Calendar feeds only: days before a notice deadline its reminder shows. */
  noticeReminderDays?: number;
}

export function accessOfRow(row: Pick<TokenListRow, 'accessAll' | 'accessPersonal' | 'accessOrganizationIds' | 'organizationId'>): Access {
  if (row.organizationId) return { kind: 'chosen', personal: false, organizationIds: [row.organizationId] };
  return row.accessAll ? { kind: 'all' } : { kind: 'chosen', personal: row.accessPersonal, organizationIds: row.accessOrganizationIds };
}

/**
 * Token rows as the lists show them: the owner, the restrictions (and their short
 * readable form, with organisation names) and the organisations that removed the key's
 * access. A handful of small queries per list, never per request.
 */
export async function detailsOf(db: Database, rows: readonly TokenListRow[], now: Date): Promise<TokenDetails[]> {
  const removals = await selectRemovalsOf(db, rows.map((r) => r.id));
  const names = await selectOrganizationNames(db, [
    ...rows.flatMap((r) => [...r.accessOrganizationIds, ...(r.organizationId ? [r.organizationId] : [])]),
  ]);
  return rows.map((row) => {
    const access = accessOfRow(row);
    const removedFrom = removals
      .filter((r) => r.tokenId === row.id)
      .map((r) => ({ organizationId: r.organizationId, organizationName: r.organizationName, removedAt: r.removedAt, removedBy: r.removedByEmail ?? null }));
    const restrictions = describeRestrictions({ access, permissions: row.permissions, allowedAddresses: row.allowedAddresses, organizationNames: names })
      + (removedFrom.length > 0 ? ` · removed by ${removedFrom.map((r) => r.organizationName).join(', ')}` : '');
    return {
      id: row.id,
      name: row.name,
      hint: row.hint,
      createdAt: row.createdAt,
      lastUsedAt: row.lastUsedAt,
      expiresAt: row.expiresAt,
      revokedAt: row.revokedAt,
      status: statusOf(row, now),
      owner: row.organizationId
        ? { kind: 'organization' as const, organizationId: row.organizationId, organizationName: names.get(row.organizationId) ?? row.organizationId }
        : { kind: 'user' as const, userId: row.userId! },
      createdBy: row.createdBy,
      access,
      accessOrganizations: (access.kind === 'chosen' ? access.organizationIds : []).map((id) => ({ id, name: names.get(id) ?? id })),
      permissions: row.permissions,
      allowedAddresses: row.allowedAddresses,
      previousExpiresAt: row.previousExpiresAt && row.previousExpiresAt > now ? row.previousExpiresAt : null,
      restrictions,
      removedFrom,
      noticeReminderDays: row.noticeReminderDays,
    };
  });
}
