import { sql, type SQL } from 'drizzle-orm';
import { runStatement, type Database, type Statement } from '../client';
import { accessTokens, webhookEndpoints } from '../schema';
import { MEMBERSHIPS_WITH_ORGANIZATION, memberObjectReaches, memberObjectReachesPersonal, type MemberObject } from './access';

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

export function tokenScopeStatement(tokenId: string): Statement<TokenScopeRow[]> {
  const t = accessTokens;
  return {
    name: 'access-tokens.scope',
    build: (db) =>
      db
        .select({
          userId: t.userId,
          ownerOrganizationId: t.organizationId,
          personal: sql<boolean>`(${t.organizationId} IS NULL AND ${memberObjectReachesPersonal({ accessAll: sql`${t.accessAll}`, accessPersonal: sql`${t.accessPersonal}` })})`,
          organizationIds: sql<string[]>`CASE WHEN ${t.organizationId} IS NOT NULL THEN jsonb_build_array(${t.organizationId})
            ELSE ${memberOrganizationIds({ userId: sql`${t.userId}`, accessAll: sql`${t.accessAll}`, accessOrganizationIds: sql`${t.accessOrganizationIds}`, tokenId: sql`${t.id}` })} END`,
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
