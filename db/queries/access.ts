import { and, eq, isNull, or, sql, type Placeholder, type SQL } from 'drizzle-orm';
import type { PgColumn } from 'drizzle-orm/pg-core';
import { contracts, memberships } from '../schema';

/**
 * Who may see which contract, written once (docs/api-decisions.md, "Access"): a caller sees
 * their personal contracts (no organisation, owned by them) and every contract of every
 * organisation they belong to at the time of the request. Every statement over contracts
 * takes its access condition from here.
 *
 * The rule has two forms with the same meaning:
 * - `accessibleTo()`: one predicate, for statements that find few rows (one contract, a
 *   month's renewals);
 * - `accessPaths()`: the same rule as a union of paths (the personal contracts, then each
 *   organisation's), each served in list order by its own index, so that a page can merge
 *   the paths (Merge Append) and read about limit + offset rows whatever the caller sees.
 *
 * Its other forms are here too: a count's paths (`countPaths()`), the same paths' keys in
 * the per-path counters (`counterPathKeys()`, `counterPaths()`), the scope of a member's key,
 * feed or endpoint (`memberObjectReaches()`) and the webhook fan-out turned around
 * (`endpointMaySee()`). tests/access/agreement.test.ts holds them all to the rule.
 *
 * Values are always placeholders, so that a statement's text depends only on its shape
 * (how many organisations) and can be prepared once.
 */

/**
 * Who is asking: a user, and the organisations whose contracts the caller reaches right
 * now (the user's memberships, narrowed for a restricted key: db/queries/token-scope.ts).
 * `personal: false` leaves the user's personal contracts out (a key restricted to
 * organisations, an organisation's own key); absent means true.
 */
export interface CallerScope {
  userId: string;
  organizationIds: readonly string[];
  personal?: boolean;
  /** The API key asking, if one is: its own events are in its event list (eventListPaths()). */
  tokenId?: string;
}

/**
 * The owner id a scope without personal contracts puts in the personal path: no user has
 * it, so the path matches nothing while the statement keeps its one shape and index.
 */
export const NO_USER = '00000000-0000-0000-0000-000000000000';
const personalOwner = (scope: CallerScope) => (scope.personal === false ? NO_USER : scope.userId);

/**
 * A table whose rows belong to a contract's owner scope: contracts, and the event list's
 * events (webhook_events, which carry the contract's owner and organisation).
 */
export interface OwnedRows {
  ownerId: PgColumn;
  organizationId: PgColumn;
}

const personalContracts = (userId: Placeholder, rows: OwnedRows = contracts) => and(isNull(rows.organizationId), eq(rows.ownerId, userId))!;
const organizationContracts = (organizationId: Placeholder, rows: OwnedRows = contracts) => eq(rows.organizationId, organizationId);
const anyOrganizationContracts = (organizationIds: Placeholder) => sql`${contracts.organizationId} = any(${organizationIds}::uuid[])`;

/** The rule as one predicate over the placeholders `userId` and `orgIds`. */
export function accessibleTo(): SQL {
  return or(personalContracts(sql.placeholder('userId')), anyOrganizationContracts(sql.placeholder('orgIds')))!;
}

/** The values of `accessibleTo()` for a scope. */
export function accessValues(scope: CallerScope): { userId: string; orgIds: string } {
  return { userId: personalOwner(scope), orgIds: uuidArrayLiteral(scope.organizationIds) };
}

/**
 * The organisation ids as one Postgres array literal (`{id,id}`), cast by the statement.
 * Passed as an array, postgres.js would serialise it with the array types it fetches when a
 * connection opens; behind a pooler that fetch can fail (PgBouncer refusing while its
 * server is down), postgres.js does not fetch them again, and the array then goes out
 * as plain text ("malformed array literal"). The ids are UUIDs read from the database:
 * nothing in them needs quoting.
 */
export function uuidArrayLiteral(ids: readonly string[]): string {
  return `{${ids.join(',')}}`;
}

/**
 * The paths a list reads for a scope, with an optional organisation filter (which the
 * service has checked against the scope): the personal path unless filtered to one
 * organisation, then each organisation's path. Undefined when nothing can match.
 */
export interface AccessShape {
  personal: boolean;
  organizationIds: readonly string[];
}

export function accessShape(scope: CallerScope, organizationFilter: string | undefined): AccessShape | undefined {
  if (organizationFilter === undefined) {
    const personal = scope.personal !== false;
    return personal || scope.organizationIds.length > 0 ? { personal, organizationIds: scope.organizationIds } : undefined;
  }
  return scopeReaches(scope, organizationFilter) ? { personal: false, organizationIds: [organizationFilter] } : undefined;
}

/** Whether the scope reaches an organisation's contracts (an organisation filter outside it is a 403: server/access/scope.ts). */
export function scopeReaches(scope: CallerScope, organizationId: string): boolean {
  return scope.organizationIds.includes(organizationId);
}

/** "personal+3orgs", "1org": the part of a statement's name that its access paths decide. */
export function accessShapeName(shape: AccessShape): string {
  const orgs = `${shape.organizationIds.length}org${shape.organizationIds.length === 1 ? '' : 's'}`;
  return shape.personal ? `personal+${orgs}` : orgs;
}

/** One condition per path, over the placeholders `userId` and `org0`…`orgN`. */
export function accessPaths(shape: AccessShape, rows: OwnedRows = contracts): SQL[] {
  const paths: SQL[] = [];
  if (shape.personal) paths.push(personalContracts(sql.placeholder('userId'), rows));
  shape.organizationIds.forEach((_, i) => paths.push(organizationContracts(sql.placeholder(`org${i}`), rows)));
  return paths;
}

/** The event list's events (webhook_events): owned as contracts, or one API key's own. */
export interface EventRows extends OwnedRows {
  tokenId: PgColumn;
}

/**
 * The event list's paths (db/queries/events.ts): the access paths over its events (none for
 * a shape that reaches nothing), the events about every tenant (no owner, no organisation,
 * no key: contracts.reset, a TRUNCATE of the contracts), which every caller sees, and for
 * an API key its own events (access.reduced, access.expanded), over the placeholder
 * `tokenId`. A key whose access shrank to nothing still reads the last two.
 */
export function eventListPaths(shape: AccessShape | undefined, events: EventRows, ofKey: boolean): SQL[] {
  return [
    ...(shape ? accessPaths(shape, events) : []),
    sql`${events.ownerId} IS NULL AND ${events.organizationId} IS NULL AND ${events.tokenId} IS NULL`,
    ...(ofKey ? [eq(events.tokenId, sql.placeholder('tokenId'))] : []),
  ];
}

/** The values of `accessPaths()`. */
export function accessPathValues(scope: CallerScope, shape: AccessShape): Record<string, unknown> {
  const values: Record<string, unknown> = { userId: personalOwner(scope) };
  shape.organizationIds.forEach((id, i) => (values[`org${i}`] = id));
  return values;
}

/**
 * The paths of a count: the personal path and all organisations at once (`= any(orgIds)`),
 * so that the count's text does not depend on the number of organisations. Each is an
 * index-only scan of a narrow (owner, status) or (organisation, status) index.
 */
export function countPaths(shape: AccessShape): SQL[] {
  const paths: SQL[] = [];
  if (shape.personal) paths.push(personalContracts(sql.placeholder('userId')));
  paths.push(anyOrganizationContracts(sql.placeholder('orgIds')));
  return paths;
}

/** The values of `countPaths()`. */
export function countPathValues(scope: CallerScope, shape: AccessShape): Record<string, unknown> {
  return { userId: personalOwner(scope), orgIds: uuidArrayLiteral(shape.organizationIds) };
}

/**
 * The rule over the per-path counter tables (contract_counts, contract_date_counts,
 * contract_updated_counts): each row counts the contracts of one path, keyed as the
 * counters' triggers write it (migrations 0007 to 0009): `personal` true and `scope_id` the
 * owner for a person's personal contracts (organisation null), `personal` false and
 * `scope_id` the organisation for an organisation's. tests/access/agreement.test.ts holds the
 * totals read through these keys to the rule.
 */
export interface CounterTable {
  personal: PgColumn;
  scopeId: PgColumn;
}

/** Each access path's key in the counter tables, in the order of accessPaths() (its placeholders: accessPathValues()). */
export function counterPathKeys(shape: AccessShape): { personal: boolean; id: SQL }[] {
  return [
    ...(shape.personal ? [{ personal: true, id: sql`${sql.placeholder('userId')}::uuid` }] : []),
    ...shape.organizationIds.map((_, i) => ({ personal: false, id: sql`${sql.placeholder(`org${i}`)}::uuid` })),
  ];
}

/** The counter rows of all the shape's paths at once, as countPaths() reads the rows (its placeholders: countPathValues()). */
export function counterPaths(table: CounterTable, shape: AccessShape): SQL {
  const organizations = sql`(NOT ${table.personal} AND ${table.scopeId} = any(${sql.placeholder('orgIds')}::uuid[]))`;
  return shape.personal ? sql`((${table.personal} AND ${table.scopeId} = ${sql.placeholder('userId')}) OR ${organizations})` : organizations;
}

/**
 * A statement limited to one organisation (the timeline's organisation filter): the same
 * rule, since the service has checked that the caller belongs to it.
 */
export function ofOrganization(): SQL {
  return organizationContracts(sql.placeholder('organizationId'));
}

/**
 * A member's API key, calendar feed or webhook endpoint, as SQL over its row: its owner,
 * its access (everything, or the organisations chosen), and for a token its id (whose
 * removals by organisations apply).
 */
export interface MemberObject {
  userId: SQL;
  accessAll: SQL;
  accessOrganizationIds: SQL;
  tokenId?: SQL;
}

/** What `memberObjectReaches()` is a condition over. */
export const MEMBERSHIPS_WITH_ORGANIZATION = sql`${memberships} m JOIN organizations o ON o.id = m.organization_id`;

/**
 * Which organisations a member's key, feed or endpoint reaches, written once (docs/keys.md):
 * an organisation its owner belongs to (membership `m`, organisation `o`) that lets its
 * members' keys read (the policy), that the object's access includes, and, for a token,
 * that has not removed its access. Read as a scope for each request
 * (db/queries/token-scope.ts), turned around for the webhook fan-out (below), and for an
 * organisation's page and log (db/queries/tokens.ts, db/queries/security-events.ts).
 */
export function memberObjectReaches(object: MemberObject): SQL {
  const notRemoved = object.tokenId
    ? sql` AND NOT EXISTS (SELECT 1 FROM token_organization_removals r WHERE r.token_id = ${object.tokenId} AND r.organization_id = m.organization_id)`
    : sql``;
  return sql`m.user_id = ${object.userId} AND o.member_keys_allowed
      AND (${object.accessAll} OR ${object.accessOrganizationIds} @> jsonb_build_array(m.organization_id))${notRemoved}`;
}

/** Whether a person's own key, feed or endpoint reaches their personal contracts: access to everything, or personal chosen. */
export function memberObjectReachesPersonal(object: { accessAll: SQL; accessPersonal: SQL }): SQL {
  return sql`(${object.accessAll} OR ${object.accessPersonal})`;
}

/** Whether the member's object reaches one given organisation. */
export function memberObjectReachesOrganization(object: MemberObject, organizationId: SQL): SQL {
  return sql`EXISTS (SELECT 1 FROM ${MEMBERSHIPS_WITH_ORGANIZATION} WHERE m.organization_id = ${organizationId} AND ${memberObjectReaches(object)})`;
}

/**
 * The rule turned around, for the webhook fan-out (which endpoints hear of a contract):
 * whether the endpoint in alias `e` (webhook_endpoints) may see a contract of `ownerId`
 * and `organizationId`, as SQL over columns of the statement: its owner's personal
 * contracts if its access includes them, and the contracts of an organisation it reaches
 * (db/queries/token-scope.ts reads the same rule as a scope, which decides again at delivery).
 */
export function endpointMaySee(ownerId: SQL, organizationId: SQL): SQL {
  const endpoint: MemberObject = { userId: sql`e.user_id`, accessAll: sql`e.access_all`, accessOrganizationIds: sql`e.access_organization_ids` };
  return sql`((${organizationId} IS NULL AND ${ownerId} = e.user_id AND ${memberObjectReachesPersonal({ accessAll: sql`e.access_all`, accessPersonal: sql`e.access_personal` })})
    OR ${memberObjectReachesOrganization(endpoint, organizationId)})`;
}
