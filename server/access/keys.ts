import { DEFAULT_NOTICE_REMINDER_DAYS, MAX_NOTICE_REMINDER_DAYS } from '@/lib/calendar';
import type { Database } from '@/db/client';
import { selectMemberships, selectRole, selectUserEmails } from '@/db/queries/memberships';
import {
  insertRemoval,
  selectMemberKeysAllowed,
  selectMemberKeysReaching,
  selectOrganizationKeys,
  selectTokenById,
  selectTokensOf,
  updateMemberKeysAllowed,
  updateTokenRestrictions,
  type TokenListRow,
} from '@/db/queries/tokens';
import { checkAllowedAddresses, DEFAULT_PERMISSIONS, isPermission, PERMISSIONS, type Access } from '@/lib/key-restrictions';
import type { TokenDetails, TokenKind, TokenSummary } from '@/lib/tokens';
import { inTransaction, keyEvent, recordSecurityEvent } from '@/server/security-log/record';
import { AppError } from '@/server/errors';
import { clientAddressKnown } from '@/server/http/client-address';
import { withAccessEvents } from './access-events';
import { accessOfRow, detailsOf, type Restrictions } from './token-details';
import { createToken, revokeTokenById, rollApiKey, type NewToken } from './tokens';

/**
 * Least-privilege API keys (docs/keys.md): the checks of what a key may be restricted to,
 * who may create, edit, roll and revoke which key (a person their own; an organisation's
 * owners and admins its keys), and the organisation's oversight (its keys, members' keys
 * that read it, "remove access", the policy). Enforcement is elsewhere: the scope in
 * db/queries/token-scope.ts, the addresses and permissions in ./authenticate.ts.
 */

const bad = (param: string, message: string) => new AppError('invalid_request', message, [{ param, message }]);

/**
 * Checks an access choice against the user's memberships of now: a chosen set names at
 * least one thing, and only organisations the user is in.
 */
export async function checkAccess(db: Database, userId: string, access: Access | undefined): Promise<Access> {
  if (!access || access.kind === 'all') return { kind: 'all' };
  const organizationIds = [...new Set(access.organizationIds)];
  if (!access.personal && organizationIds.length === 0) {
    throw bad('access', 'Choose what it may read: personal contracts, one or more of your organisations, or everything.');
  }
  const mine = new Set((await selectMemberships(db, userId)).map((m) => m.id));
  const foreign = organizationIds.find((id) => !mine.has(id));
  if (foreign !== undefined) throw bad('access', `You are not a member of the organisation ${foreign}: access can only name your own organisations.`);
  return { kind: 'chosen', personal: access.personal, organizationIds };
}

/** Checks a permission list: not empty, each one known. */
export function checkPermissions(permissions: readonly string[] | undefined): string[] {
  if (permissions === undefined) return [...DEFAULT_PERMISSIONS];
  const unique = [...new Set(permissions.map((p) => p.trim()))];
  if (unique.length === 0) throw bad('permissions', `Give at least one permission: ${PERMISSIONS.join(', ')}.`);
  const unknown = unique.find((p) => !isPermission(p));
  if (unknown !== undefined) throw bad('permissions', `Unknown permission "${unknown.slice(0, 40)}"; the permissions are ${PERMISSIONS.join(', ')}.`);
  return PERMISSIONS.filter((p) => unique.includes(p));
}

/**
 * Checks allowed addresses: at most 20 IPv4/IPv6 addresses or CIDR ranges, and only on a
 * deployment that knows the client's address (else the list could never apply, and the
 * key would be refused everywhere).
 */
export function checkAddresses(addresses: readonly string[] | undefined): string[] {
  if (addresses === undefined) return [];
  const checked = checkAllowedAddresses(addresses);
  if (!checked.ok) throw bad('allowedAddresses', checked.message);
  if (checked.addresses.length > 0 && !clientAddressKnown()) {
    throw bad(
      'allowedAddresses',
      'Allowed addresses cannot apply on this deployment: it does not know the address a request comes from (no trusted proxy is configured: TRUSTED_PROXY_HOPS, CLIENT_ADDRESS_HEADER). Leave the list empty, or ask the operator to configure one.',
    );
  }
  return checked.addresses;
}

export type KeyOwnerChoice = { kind: 'user' } | { kind: 'organization'; organizationId: string };

export interface CreateKeyInput extends NewToken {
  owner?: KeyOwnerChoice;
  access?: Access;
  permissions?: string[];
  allowedAddresses?: string[];
}

export async function assertOrganizationAdmin(db: Database, userId: string, organizationId: string): Promise<void> {
  const role = await selectRole(db, userId, organizationId);
  if (role !== 'owner' && role !== 'admin') {
    throw new AppError('forbidden', "Only the organisation's owners and admins can manage its keys.", [
      { param: 'organizationId', message: "Only the organisation's owners and admins can manage its keys." },
    ]);
  }
}

/** Creates an API key for the user, or for an organisation the user is an owner or admin of. */
export async function createApiKey(db: Database, userId: string, input: CreateKeyInput, now = new Date()): Promise<{ secret: string; token: TokenDetails }> {
  const permissions = checkPermissions(input.permissions);
  const allowedAddresses = checkAddresses(input.allowedAddresses);
  if (input.owner?.kind === 'organization') {
    const { organizationId } = input.owner;
    await assertOrganizationAdmin(db, userId, organizationId);
    const access = input.access;
    if (access && !(access.kind === 'chosen' && !access.personal && access.organizationIds.length === 1 && access.organizationIds[0] === organizationId)) {
      throw bad('access', "An organisation's key reads that organisation's contracts only; leave access out.");
    }
    const restrictions: Restrictions = { access: { kind: 'chosen', personal: false, organizationIds: [organizationId] }, permissions, allowedAddresses };
    return createToken(db, 'api_key', { organizationId, createdBy: userId }, input, now, restrictions);
  }
  const access = await checkAccess(db, userId, input.access);
  return createToken(db, 'api_key', userId, input, now, { access, permissions, allowedAddresses });
}

/**
 * A calendar feed with an access choice (no permissions or addresses: calendar apps read
 * from anywhere) and the days before a notice deadline its reminder shows.
 */
export async function createCalendarFeed(
  db: Database,
  userId: string,
  input: NewToken & { access?: Access; noticeReminderDays?: number },
  now = new Date(),
): Promise<{ secret: string; token: TokenDetails }> {
  const access = await checkAccess(db, userId, input.access);
  const noticeReminderDays = input.noticeReminderDays ?? DEFAULT_NOTICE_REMINDER_DAYS;
  if (!Number.isInteger(noticeReminderDays) || noticeReminderDays < 0 || noticeReminderDays > MAX_NOTICE_REMINDER_DAYS) {
    throw bad('noticeReminderDays', `The reminder must be a whole number of days from 0 to ${MAX_NOTICE_REMINDER_DAYS}.`);
  }
  return createToken(db, 'calendar_feed', userId, input, now, { access, permissions: [...DEFAULT_PERMISSIONS], allowedAddresses: [], noticeReminderDays });
}

/**
 * The key with this id if the user may manage it: their own personal key, or a key of an
 * organisation they own or administer. Anything else is "not found" (a member learns
 * nothing of the organisation's keys).
 */
async function manageableKey(db: Database, userId: string, id: string, kind: TokenKind = 'api_key'): Promise<TokenListRow> {
  const row = await selectTokenById(db, kind, id);
  const notFound = new AppError('not_found', kind === 'api_key' ? 'No such API key.' : 'No such calendar feed.');
  if (!row) throw notFound;
  if (row.userId === userId) return row;
  if (row.organizationId) {
    const role = await selectRole(db, userId, row.organizationId);
    if (role === 'owner' || role === 'admin') return row;
  }
  throw notFound;
}

export interface EditRestrictionsInput {
  id: string;
  access?: Access;
  permissions?: string[];
  allowedAddresses?: string[];
}

/** Edits a key's restrictions (fields left out stay); takes effect on the next request everywhere (read with the scope). */
export async function editKeyRestrictions(db: Database, userId: string, input: EditRestrictionsInput, kind: TokenKind = 'api_key', now = new Date()): Promise<TokenDetails> {
  const row = await manageableKey(db, userId, input.id, kind);
  const permissions = input.permissions === undefined ? undefined : checkPermissions(input.permissions);
  const allowedAddresses = input.allowedAddresses === undefined ? undefined : checkAddresses(input.allowedAddresses);
  if (kind !== 'api_key' && (permissions || allowedAddresses)) throw bad('permissions', 'Only API keys have permissions and allowed addresses.');
  let access = accessOfRow(row);
  if (input.access !== undefined) {
    if (row.organizationId) throw bad('access', "An organisation's key reads that organisation's contracts only; its access cannot change.");
    access = await checkAccess(db, row.userId!, input.access);
  }
  await inTransaction(db, async (tx) => {
    // A personal key's access edited: its event list says what it lost and gained.
    await withAccessEvents(tx, { userIds: row.organizationId ? [] : [row.userId!] }, () =>
      updateTokenRestrictions(tx, row.id, {
        accessAll: row.organizationId ? true : access.kind === 'all',
        accessPersonal: access.kind === 'chosen' && access.personal,
        accessOrganizationIds: access.kind === 'chosen' && !row.organizationId ? access.organizationIds : [],
        ...(permissions ? { permissions } : {}),
        ...(allowedAddresses ? { allowedAddresses } : {}),
      }),
    );
    const changed = [input.access !== undefined && 'access', permissions && 'permissions', allowedAddresses && 'allowed addresses'].filter(Boolean).join(', ');
    if (kind === 'api_key') await recordSecurityEvent(tx, { ...keyEvent('api_key.edited', row, { change: changed || 'nothing' }), at: now });
  });
  const [details] = await detailsOf(db, [(await selectTokenById(db, kind, row.id))!], now);
  return details!;
}

/** Rolls a key the user may manage (./tokens.ts `rollApiKey`). */
export async function rollKey(db: Database, userId: string, id: string, graceHours: number, now = new Date()): Promise<{ secret: string; token: TokenSummary }> {
  await manageableKey(db, userId, id);
  return rollApiKey(db, id, graceHours, now);
}

/** Revokes a key the user may manage. */
export async function revokeKey(db: Database, userId: string, id: string, now = new Date()): Promise<TokenSummary> {
  await manageableKey(db, userId, id);
  return revokeTokenById(db, 'api_key', id, now);
}

// Oversight by the organisation --------------------------------------------------------------

export interface OrganizationKeys {
  organization: { id: string; name: string; memberKeysAllowed: boolean };
  /** The organisation's own keys (every status), with who created them. */
  organizationKeys: (TokenDetails & { createdByEmail: string | null })[];
  /** Members' personal keys that read the organisation's contracts today (none while the policy is off). */
  memberKeys: (TokenDetails & { ownerEmail: string; ownerName: string | null })[];
}

/** Every key that can read an organisation's contracts, for its owners and admins. */
export async function listOrganizationKeys(db: Database, userId: string, organizationId: string, now = new Date()): Promise<OrganizationKeys> {
  await assertOrganizationAdmin(db, userId, organizationId);
  const memberKeysAllowed = (await selectMemberKeysAllowed(db, organizationId)) ?? true;
  const own = await selectOrganizationKeys(db, organizationId);
  const members = memberKeysAllowed ? await selectMemberKeysReaching(db, organizationId, now) : [];
  const ownDetails = await detailsOf(db, own, now);
  const memberDetails = await detailsOf(db, members, now);
  const names = new Map((await selectMemberships(db, userId)).map((m) => [m.id, m.name]));
  const creators = await creatorEmails(db, own.map((k) => k.createdBy));
  return {
    organization: { id: organizationId, name: names.get(organizationId) ?? organizationId, memberKeysAllowed },
    organizationKeys: ownDetails.map((d, i) => ({ ...d, createdByEmail: own[i]!.createdBy ? (creators.get(own[i]!.createdBy!) ?? null) : null })),
    memberKeys: memberDetails.map((d, i) => ({ ...d, ownerEmail: members[i]!.ownerEmail, ownerName: members[i]!.ownerName })),
  };
}

function creatorEmails(db: Database, ids: readonly (string | null)[]): Promise<Map<string, string>> {
  return selectUserEmails(db, ids.filter((id): id is string => id !== null));
}

/**
 * "Remove access": a member's personal key no longer reads this organisation's contracts
 * (nothing else of it changes; its owner sees who removed it and when). Takes effect on
 * the key's next request on every instance: the scope is read per request.
 */
export async function removeKeyAccess(db: Database, userId: string, organizationId: string, tokenId: string, now = new Date()): Promise<void> {
  await assertOrganizationAdmin(db, userId, organizationId);
  const row = await selectTokenById(db, 'api_key', tokenId);
  const member = row?.userId ? await selectRole(db, row.userId, organizationId) : undefined;
  if (!row || !row.userId || member === undefined) throw new AppError('not_found', "No such key among the members' personal keys.");
  await inTransaction(db, async (tx) => {
    await withAccessEvents(tx, { organizationId, userIds: [row.userId!] }, () => insertRemoval(tx, { tokenId, organizationId, removedBy: userId, removedAt: now }));
    // In the member's own log and the organisation's.
    await recordSecurityEvent(tx, { ...keyEvent('api_key.access_removed', { ...row, organizationId }), at: now });
  });
}

export async function organizationPolicy(db: Database, userId: string, organizationId: string): Promise<{ memberKeysAllowed: boolean }> {
  await assertOrganizationAdmin(db, userId, organizationId);
  return { memberKeysAllowed: (await selectMemberKeysAllowed(db, organizationId)) ?? true };
}

/** Sets the policy; members' keys, feeds and endpoints follow it from their next request (read with the scope). */
export async function setOrganizationPolicy(db: Database, userId: string, organizationId: string, memberKeysAllowed: boolean): Promise<{ memberKeysAllowed: boolean }> {
  await assertOrganizationAdmin(db, userId, organizationId);
  await inTransaction(db, async (tx) => {
    // Every member's personal keys that read (or may now read) the organisation hear of it.
    await withAccessEvents(tx, { organizationId }, () => updateMemberKeysAllowed(tx, organizationId, memberKeysAllowed));
    await recordSecurityEvent(tx, {
      kind: 'organization.policy_changed',
      subjectUserId: null,
      organizationId,
      objectType: 'organization',
      objectId: organizationId,
      objectLabel: "Members' personal keys may read this organisation's contracts",
      details: { member_keys_allowed: memberKeysAllowed },
    });
  });
  return { memberKeysAllowed };
}

/**
 * Every key a person manages (the command line's list): their personal keys, then the
 * keys of the organisations they own or administer.
 */
export async function listKeysManagedBy(db: Database, userId: string, now = new Date()): Promise<TokenDetails[]> {
  const personal = await detailsOf(db, await selectTokensOf(db, 'api_key', userId), now);
  const administered = (await selectMemberships(db, userId)).filter((m) => m.role === 'owner' || m.role === 'admin');
  const organizationKeys = await Promise.all(administered.map(async (m) => detailsOf(db, await selectOrganizationKeys(db, m.id), now)));
  return [...personal, ...organizationKeys.flat()];
}
