import { sql, type SQL } from 'drizzle-orm';
import { runStatement, type Database, type Statement } from '../client';
import { accessTokens, webhookEndpoints } from '../schema';
import { MEMBERSHIPS_WITH_ORGANIZATION, memberObjectReaches, memberObjectReachesPersonal, uuidArrayLiteral, type MemberObject } from './access';

/**
 * What a token or webhook endpoint reaches right now, read on every request with no cache
 * (so that a removed membership, an edited restriction, "remove access" and an
 * organisation's policy take effect on the next request on every instance): one statement
 * by primary key, in place of the membership query a scope was read with before.
 *
 * The organisations it reaches are the owner's memberships, narrowed by its chosen access,
 * the organisations' policy and (for an API key) their removals: `memberObjectReaches()`
 * in db/queries/access.ts, where the rule is written. An organisation's own key reaches
 * that organisation alone, whoever created it.
 */

/** The organisations a member's token or endpoint reaches (db/queries/access.ts), as a JSON array of ids. */
function memberOrganizationIds(object: MemberObject): SQL {
  return sql`coalesce((SELECT jsonb_agg(m.organization_id) FROM ${MEMBERSHIPS_WITH_ORGANIZATION} WHERE ${memberObjectReaches(object)}), '[]'::jsonb)`;
}

export interface TokenScopeRow {
  userId: string | null;
  ownerOrganizationId: string | null;
  personal: boolean;
  organizationIds: string[];
  permissions: string[];
  allowedAddresses: string[];
}

/** What a token row reaches: its owner's personal contracts, and the organisations (a JSON array). */
const tokenReach = () => {
  const t = accessTokens;
  return {
    personal: sql<boolean>`(${t.organizationId} IS NULL AND ${memberObjectReachesPersonal({ accessAll: sql`${t.accessAll}`, accessPersonal: sql`${t.accessPersonal}` })})`,
    organizationIds: sql<string[]>`CASE WHEN ${t.organizationId} IS NOT NULL THEN jsonb_build_array(${t.organizationId})
      ELSE ${memberOrganizationIds({ userId: sql`${t.userId}`, accessAll: sql`${t.accessAll}`, accessOrganizationIds: sql`${t.accessOrganizationIds}`, tokenId: sql`${t.id}` })} END`,
  };
};

export function tokenScopeStatement(tokenId: string): Statement<TokenScopeRow[]> {
  const t = accessTokens;
  return {
    name: 'access-tokens.scope',
    build: (db) =>
      db
        .select({
          userId: t.userId,
          ownerOrganizationId: t.organizationId,
          ...tokenReach(),
          permissions: t.permissions,
          allowedAddresses: t.allowedAddresses,
        })
        .from(t)
        .where(sql`${t.id} = ${sql.placeholder('tokenId')}`)
        .limit(1),
    values: { tokenId },
  };
}

export async function selectTokenScope(db: Database, tokenId: string): Promise<TokenScopeRow | undefined> {
  const [row] = await runStatement(db, tokenScopeStatement(tokenId));
  return row && { ...row, organizationIds: parseJsonArray(row.organizationIds), permissions: parseJsonArray(row.permissions), allowedAddresses: parseJsonArray(row.allowedAddresses) };
}

export interface KeyReach {
  tokenId: string;
  personal: boolean;
  organizationIds: string[];
}

/**
 * What each personal API key of these users reaches right now (the scope above, for many
 * keys at once), for the events that tell a key its access changed
 * (server/access/access-events.ts). Revoked keys read nothing and are left out; an
 * organisation's own key reaches its organisation whatever its creator's memberships.
 */
export async function selectPersonalKeyReaches(db: Database, userIds: readonly string[]): Promise<KeyReach[]> {
  if (userIds.length === 0) return [];
  const t = accessTokens;
  const rows = await db
    .select({ tokenId: t.id, ...tokenReach() })
    .from(t)
    .where(
      sql`${t.kind} = 'api_key' AND ${t.organizationId} IS NULL AND ${t.revokedAt} IS NULL
        AND ${t.userId} IN (${sql.join(userIds.map((id) => sql`${id}::uuid`), sql`, `)})`,
    )
    .orderBy(t.id);
  return rows.map((row) => ({ ...row, organizationIds: parseJsonArray(row.organizationIds) }));
}

/**
 * Transaction-scoped locks on what keys reach, so that two changes of it one after the
 * other each read the other's result: an organisation's (its policy, its memberships),
 * then each person's, in one statement and in id order. Always in that order (an
 * organisation before people, people sorted), so that two changes wait for each other
 * and never deadlock.
 */
export async function lockOrganizationReach(db: Database, organizationId: string): Promise<void> {
  await db.execute(sql`SELECT pg_advisory_xact_lock(hashtextextended(${`org-reach:${organizationId}`}, 0))`);
}

export async function lockKeyReachesOf(db: Database, userIds: readonly string[]): Promise<void> {
  if (userIds.length === 0) return;
  await db.execute(sql`
    SELECT pg_advisory_xact_lock(k) FROM (
      SELECT hashtextextended('key-reach:' || u::text, 0) AS k FROM unnest(${uuidArrayLiteral(userIds)}::uuid[]) AS u ORDER BY u
    ) AS people`);
}

/** What a key gained and lost between two readings of its reach. */
export interface KeyReachChange {
  tokenId: string;
  reduced: { personal: boolean; organizationIds: string[] };
  expanded: { personal: boolean; organizationIds: string[] };
}

export interface EndpointScopeRow {
  userId: string;
  personal: boolean;
  organizationIds: string[];
}

/** The same for a webhook endpoint: its owner, narrowed by its access and the organisations' policy. */
export async function selectEndpointScope(db: Database, endpointId: string): Promise<EndpointScopeRow | undefined> {
  const e = webhookEndpoints;
  const [row] = await db
    .select({
      userId: e.userId,
      personal: sql<boolean>`${memberObjectReachesPersonal({ accessAll: sql`${e.accessAll}`, accessPersonal: sql`${e.accessPersonal}` })}`,
      organizationIds: sql<string[]>`${memberOrganizationIds({ userId: sql`${e.userId}`, accessAll: sql`${e.accessAll}`, accessOrganizationIds: sql`${e.accessOrganizationIds}` })}`,
    })
    .from(e)
    .where(sql`${e.id} = ${endpointId}`);
  return row && { ...row, organizationIds: parseJsonArray(row.organizationIds) };
}

/** jsonb arrives parsed from postgres.js and PGlite; a driver that hands back text is parsed here. */
function parseJsonArray(value: unknown): string[] {
  const parsed: unknown = typeof value === 'string' ? JSON.parse(value) : value;
  return Array.isArray(parsed) ? parsed.map(String) : [];
}
