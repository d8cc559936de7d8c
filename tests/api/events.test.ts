import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '@/db/client';
import { pruneEventList } from '@/db/queries/events';
import { contracts, memberships, organizations, users } from '@/db/schema';
import { createApiKey, editKeyRestrictions, removeKeyAccess, setOrganizationPolicy } from '@/server/access/keys';
import { joinOrganization, leaveOrganization } from '@/server/access/memberships';
import { setProcessDatabase } from '@/server/database';
import { listEvents } from '@/server/events/service';
import { buildOpenApiDocument } from '@/server/rest/openapi-document';
import { handleApiRequest } from '@/server/rest/router';
import { configureForFile } from '../helpers/config';
import { createTestDatabase } from '../helpers/db';
import { createResponseValidator, type ApiResponse } from '../helpers/openapi-validator';
import { newApiKey } from '../helpers/tokens';

/**
 * GET /api/v1/events and /events/{id} through the REST handler, every answer validated
 * against the OpenAPI document: what a key sees (its owner's personal contracts and
 * organisations, a restricted key's access only), paging by cursor and polling at the
 * end, the types filter, since, retention (410 cursor_expired) and the ids shared with
 * webhooks. The order under concurrent writers: tests/db/event-list.test.ts.
 */

configureForFile({ RATE_LIMIT_GENERAL_PER_WINDOW: '100000' });

const BASE = 'http://localhost:3000';
const USER = '00000000-0000-4000-8000-00000000e101';
const OTHER = '00000000-0000-4000-8000-00000000e102';
const ORG = '00000000-0000-4000-8000-00000000e1a1';
const OTHER_ORG = '00000000-0000-4000-8000-00000000e1a2';

type EventBody = {
  id: string;
  type: string;
  created_at: string;
  data: { contract: { id: string; title?: string; organization_id: string | null }; changed_fields?: string[]; organization_ids?: string[]; personal?: boolean };
};
type ListBody = { data: { events: EventBody[]; pagination: { limit: number; next_cursor: string; has_more: boolean } } };

let handle: DatabaseHandle;
let key: string;
let orgOnlyKey: string;
let validate: Awaited<ReturnType<typeof createResponseValidator>>;

beforeAll(async () => {
  handle = await createTestDatabase();
  setProcessDatabase(handle);
  await handle.db.insert(users).values([
    { id: USER, email: 'events-api@example.com' },
    { id: OTHER, email: 'events-api-other@example.com' },
  ]);
  await handle.db.insert(organizations).values([
    { id: ORG, name: 'Events Org' },
    { id: OTHER_ORG, name: 'Not theirs' },
  ]);
  await handle.db.insert(memberships).values([
    { userId: USER, organizationId: ORG },
    { userId: OTHER, organizationId: OTHER_ORG },
  ]);
  key = (await newApiKey(handle.db, USER, { name: 'events', expiresInDays: null })).key;
  orgOnlyKey = (await createApiKey(handle.db, USER, { name: 'org only', expiresInDays: null, access: { kind: 'chosen', personal: false, organizationIds: [ORG] } })).secret;
  validate = await createResponseValidator(buildOpenApiDocument(BASE));
});
afterAll(() => handle?.close());

async function call(pathAndQuery: string, headers: Record<string, string> = {}, apiKey = key): Promise<ApiResponse> {
  const req = new Request(`${BASE}/api/v1${pathAndQuery}`, { headers: { 'X-API-Key': apiKey, ...headers } });
  const res = await handleApiRequest(req);
  const text = await res.text();
  const json = res.headers.get('content-type')?.startsWith('application/json') ? JSON.parse(text) : undefined;
  const response = { status: res.status, headers: res.headers, text, json };
  validate('GET', new URL(req.url).pathname.slice('/api/v1'.length), response);
  return response;
}

/** Every event from `cursor` on, page by page, and the cursor the last page ended at. */
async function walk(query: string, apiKey = key): Promise<{ events: EventBody[]; cursor: string }> {
  const events: EventBody[] = [];
  let res = await call(`/events?${query}`, {}, apiKey);
  for (;;) {
    expect(res.status, res.text).toBe(200);
    const body = res.json as ListBody;
    events.push(...body.data.events);
    if (!body.data.pagination.has_more) {
      expect(res.headers.get('link')).toBeNull();
      return { events, cursor: body.data.pagination.next_cursor };
    }
    const next = /<([^>]+)>; rel="next"/.exec(res.headers.get('link') ?? '')?.[1];
    expect(next, 'Link rel=next while has_more').toBeDefined();
    expect(new URL(next!).searchParams.get('cursor')).toBe(body.data.pagination.next_cursor);
    res = await call(`${new URL(next!).pathname.slice('/api/v1'.length)}${new URL(next!).search}`, {}, apiKey);
  }
}

const insert = (title: string, organizationId: string | null, owner = USER) =>
  handle.db.insert(contracts).values({ ownerId: owner, organizationId, title, fileName: 'e.pdf', fileSize: 1 }).returning({ id: contracts.id });

describe('GET /api/v1/events', () => {
  let firstCursor: string;

  it('lists the caller\'s creates, updates and deletions, oldest first, in pages, each with its webhook id and data', async () => {
    const [personal] = await insert('Personal', null);
    const [shared] = await insert('Shared', ORG);
    await insert('Not visible', OTHER_ORG, OTHER);
    await handle.query(`UPDATE contracts SET title = 'Shared, renamed', status = 'completed' WHERE id = $1`, [shared!.id]);
    await handle.query(`DELETE FROM contracts WHERE id = $1`, [personal!.id]);
    const { events, cursor } = await walk('limit=2');
    firstCursor = cursor;
    expect(events.map((e) => [e.type, e.data.contract.id])).toEqual([
      ['contract.created', personal!.id],
      ['contract.created', shared!.id],
      ['contract.updated', shared!.id],
      ['contract.extraction_completed', shared!.id],
      ['contract.deleted', personal!.id],
    ]);
    expect(events[2]!.data.changed_fields).toEqual(['title', 'status', 'data']);
    expect(events[2]!.data.contract.title).toBe('Shared, renamed');
    expect(events[4]!.data.contract).toEqual({ id: personal!.id, organization_id: null });
    expect(events.every((e) => /^msg_[0-9a-f]{32}$/.test(e.id))).toBe(true);
    // One of them by id: the same event; another tenant's is a 404 like a missing one.
    const one = await call(`/events/${events[2]!.id}`);
    expect(one.status).toBe(200);
    expect((one.json as { data: { event: EventBody } }).data.event).toEqual(events[2]);
    const [theirs] = await handle.query<{ id: string }>(`SELECT id FROM webhook_events WHERE contract->>'title' = 'Not visible'`);
    expect((await call(`/events/msg_${theirs!.id.replaceAll('-', '')}`)).status).toBe(404);
    expect((await call(`/events/msg_${'0'.repeat(32)}`)).status).toBe(404);
  });

  it('at the end answers an empty page with the same cursor, then what committed since; 304 while nothing changed', async () => {
    const empty = await call(`/events?cursor=${firstCursor}`);
    expect((empty.json as ListBody).data).toEqual({ events: [], pagination: { limit: 50, next_cursor: firstCursor, has_more: false } });
    const etag = empty.headers.get('etag')!;
    expect((await call(`/events?cursor=${firstCursor}`, { 'If-None-Match': etag })).status).toBe(304);
    await insert('Later', ORG);
    const later = await call(`/events?cursor=${firstCursor}`, { 'If-None-Match': etag });
    expect(later.status).toBe(200);
    expect((later.json as ListBody).data.events.map((e) => e.data.contract.title)).toEqual(['Later']);
  });

  it('keeps the chosen types; a restricted key sees its organisations only', async () => {
    const { events: updates } = await walk('types=contract.updated,contract.deleted');
    expect(updates.map((e) => e.type)).toEqual(['contract.updated', 'contract.deleted']);
    const { events: orgOnly } = await walk('', orgOnlyKey);
    expect(orgOnly.length).toBeGreaterThan(0);
    expect(orgOnly.every((e) => e.data.contract.organization_id === ORG)).toBe(true);
  });

  it('starts at an instant with since', async () => {
    const before = new Date(Date.now() - 1000).toISOString();
    await new Promise((resolve) => setTimeout(resolve, 1100));
    await insert('After since', null);
    const { events } = await walk(`since=${encodeURIComponent(new Date(Date.now() - 500).toISOString())}`);
    expect(events.map((e) => e.data.contract.title)).toEqual(['After since']);
    const { events: all } = await walk(`since=${encodeURIComponent(before)}`);
    expect(all.map((e) => e.data.contract.title)).toContain('After since');
  });

  it('refuses bad input with a 400 naming the parameter', async () => {
    for (const [query, param] of [
      ['types=contract.renewal_upcoming', 'types'],
      ['cursor=not-a-cursor', 'cursor'],
      [`cursor=${Buffer.from('[1,-5]').toString('base64url')}`, 'cursor'],
      [`cursor=${firstCursor}&since=2026-01-01T00:00:00Z`, 'since'],
      ['since=yesterday', 'since'],
      ['limit=101', 'limit'],
      ['sort=created_at', 'sort'],
    ] as const) {
      const res = await call(`/events?${query}`);
      expect(res.status, query).toBe(400);
      expect((res.json as { error: { details: { param: string }[] } }).error.details[0]!.param, query).toBe(param);
    }
    expect((await call('/events/123')).status).toBe(400);
  });

  it('a TRUNCATE of the contracts is one contracts.reset event, in every key\'s list, and no webhook', async () => {
    const { cursor } = await walk('');
    const { cursor: orgCursor } = await walk('', orgOnlyKey);
    const otherKey = (await newApiKey(handle.db, OTHER, { name: 'other', expiresInDays: null })).key;
    const { cursor: otherCursor } = await walk('', otherKey);
    await handle.query('TRUNCATE contracts');
    for (const [from, apiKey] of [[cursor, key], [orgCursor, orgOnlyKey], [otherCursor, otherKey]] as const) {
      const { events } = await walk(`cursor=${from}`, apiKey);
      expect(events.map((e) => [e.type, e.data])).toEqual([['contracts.reset', {}]]);
    }
    // Only the reset's type when asked for it; nobody's endpoint hears of it (no webhook type).
    const { events: resets } = await walk('types=contracts.reset');
    expect(resets).toHaveLength(1);
  });

  it('answers 410 cursor_expired for a cursor or since older than what is retained', async () => {
    const { events } = await walk('');
    const last = events.at(-1)!;
    // Every event so far is older than "now + a minute": all of them go, other tenants' too.
    const [all] = await handle.query<{ n: string }>(`SELECT count(*) AS n FROM webhook_events WHERE position IS NOT NULL`);
    expect(Number(all!.n)).toBeGreaterThan(events.length);
    expect(await pruneEventList(handle.db, new Date(Date.now() + 60_000), 1000)).toBe(Number(all!.n));
    const expired = await call(`/events?cursor=${firstCursor}`);
    expect(expired.status).toBe(410);
    expect((expired.json as { error: { code: string; message: string } }).error).toMatchObject({ code: 'cursor_expired' });
    expect((expired.json as { error: { message: string } }).error.message).toContain('export');
    expect((await call(`/events?since=${encodeURIComponent(last.created_at)}`)).status).toBe(410);
    // From the start: the list begins after what was removed.
    expect((await call('/events')).json).toMatchObject({ data: { events: [] } });
    expect((await call(`/events/${last.id}`)).status).toBe(404);
  });
});

describe('access.reduced and access.expanded: a key told what it may no longer (or now) see', () => {
  /** Each key's list from now on: `next()` is what arrived since the last call, as [type, data]. */
  async function follow(apiKey: string) {
    let { cursor } = await walk('', apiKey);
    return async () => {
      const page = await walk(`cursor=${cursor}`, apiKey);
      cursor = page.cursor;
      return page.events.map((e) => [e.type, e.data]);
    };
  }
  const reduced = (organization_ids: string[], personal = false) => ['access.reduced', { organization_ids, personal }];
  const expanded = (organization_ids: string[], personal = false) => ['access.expanded', { organization_ids, personal }];

  it('an edit of the key\'s access: what it lost, then what it gained, in its own list only', async () => {
    const { secret, token } = await createApiKey(handle.db, USER, { name: 'edited', expiresInDays: null });
    const [edited, everyone, mine] = [await follow(secret), await follow(key), await follow(orgOnlyKey)];
    await editKeyRestrictions(handle.db, USER, { id: token.id, access: { kind: 'chosen', personal: true, organizationIds: [] } });
    expect(await edited()).toEqual([reduced([ORG])]);
    await editKeyRestrictions(handle.db, USER, { id: token.id, access: { kind: 'chosen', personal: false, organizationIds: [ORG] } });
    expect(await edited()).toEqual([reduced([], true), expanded([ORG])]);
    // Permissions only: nothing it may see changed.
    await editKeyRestrictions(handle.db, USER, { id: token.id, permissions: ['contracts:read'] });
    expect(await edited()).toEqual([]);
    expect(await everyone()).toEqual([]);
    expect(await mine()).toEqual([]);
    // Its own events by id; another key's are a 404.
    const { events } = await walk('types=access.reduced', secret);
    expect(events).toHaveLength(2);
    expect((await call(`/events/${events[0]!.id}`, {}, secret)).status).toBe(200);
    expect((await call(`/events/${events[0]!.id}`)).status).toBe(404);
  });

  it('a membership ending and starting again: every personal key of the person hears of it, an organisation\'s own key does not', async () => {
    await joinOrganization(handle.db, USER, ORG, 'owner');
    const organizationKey = (await createApiKey(handle.db, USER, { name: 'org', expiresInDays: null, owner: { kind: 'organization', organizationId: ORG } })).secret;
    const [all, orgOnly, ofOrganization] = [await follow(key), await follow(orgOnlyKey), await follow(organizationKey)];
    expect(await leaveOrganization(handle.db, USER, ORG)).toBe(true);
    expect(await all()).toEqual([reduced([ORG])]);
    // Its access shrank to nothing: it still reads its own list.
    expect(await orgOnly()).toEqual([reduced([ORG])]);
    expect((await call('/contracts', {}, orgOnlyKey)).json).toMatchObject({ data: { contracts: [] } });
    await insert('While away', ORG);
    expect(await all()).toEqual([]);
    await joinOrganization(handle.db, USER, ORG, 'owner');
    // The list is read with the key's access of now: back in, it sees the organisation's
    // retained events, those of its time away too (as a new key would), then the expansion.
    const back = await all();
    expect(back.map(([type]) => type)).toEqual(['contract.created', 'access.expanded']);
    expect(back[1]).toEqual(expanded([ORG]));
    expect((await orgOnly()).map(([type]) => type)).toEqual(['contract.created', 'access.expanded']);
    // The organisation's key read the organisation all along.
    expect((await ofOrganization()).map(([type]) => type)).toEqual(['contract.created']);
    // Leaving twice changes nothing.
    await leaveOrganization(handle.db, USER, ORG);
    await leaveOrganization(handle.db, USER, ORG);
    expect(await all()).toEqual([reduced([ORG])]);
    await joinOrganization(handle.db, USER, ORG, 'owner');
    expect(await all()).toEqual([expanded([ORG])]);
  });

  it('the organisation\'s policy and "remove access" take its contracts from members\' personal keys, and say so', async () => {
    const [all, orgOnly] = [await follow(key), await follow(orgOnlyKey)];
    await setOrganizationPolicy(handle.db, USER, ORG, false);
    expect(await all()).toEqual([reduced([ORG])]);
    expect(await orgOnly()).toEqual([reduced([ORG])]);
    await setOrganizationPolicy(handle.db, USER, ORG, true);
    expect(await all()).toEqual([expanded([ORG])]);
    // Setting it to what it is already: nothing.
    await setOrganizationPolicy(handle.db, USER, ORG, true);
    expect(await all()).toEqual([]);
    const { id: removedId, key: removed } = await newApiKey(handle.db, USER, { name: 'removed', expiresInDays: null });
    const fromRemoved = await follow(removed);
    await removeKeyAccess(handle.db, USER, ORG, removedId);
    expect(await fromRemoved()).toEqual([reduced([ORG])]);
    expect(await all()).toEqual([]);
  });

  it('a page ends at the key\'s own access event: what follows is read with the access as it changed', async () => {
    const { secret, token } = await createApiKey(handle.db, USER, { name: 'stale', expiresInDays: null });
    const { cursor } = await walk('', secret);
    // The access a request read before a change committed (the race between its two reads).
    const stale = { userId: USER, organizationIds: [ORG], tokenId: token.id };
    await leaveOrganization(handle.db, USER, ORG);
    const [after] = await insert('After leaving', ORG);
    const page = await listEvents(handle.db, stale, { limit: 50, cursor });
    expect(page.events.map((e) => e.type)).toEqual(['access.reduced']);
    expect(page.pagination.has_more).toBe(true);
    // With the access of now, the organisation's later event is not there.
    const rest = await walk(`cursor=${page.pagination.next_cursor}`, secret);
    expect(rest.events.map((e) => e.data.contract?.id)).not.toContain(after!.id);
    // The stale read past the event would have shown it: the cut is what keeps it out.
    const past = await listEvents(handle.db, stale, { limit: 50, cursor: page.pagination.next_cursor });
    expect(past.events.map((e) => e.data.contract?.id)).toContain(after!.id);
    await joinOrganization(handle.db, USER, ORG, 'owner');
  });

  it('the export\'s X-Events-Cursor: the list from there holds every change after the file was started', async () => {
    const [earlier] = await insert('Before the export', null);
    const exported = await handleApiRequest(new Request(`${BASE}/api/v1/contracts/export`, { method: 'POST', headers: { 'X-API-Key': key } }));
    expect(exported.status).toBe(200);
    const cursor = exported.headers.get('x-events-cursor')!;
    expect(await exported.text()).toContain(earlier!.id);
    // The end of the list when the file started: nothing after it yet.
    expect((await walk(`cursor=${cursor}`)).events).toEqual([]);
    const [later] = await insert('After the export', null);
    const { events } = await walk(`cursor=${cursor}`);
    expect(events.map((e) => [e.type, e.data.contract.id])).toEqual([['contract.created', later!.id]]);
  });

  it('exports NDJSON: one get-one detail per line; the CSV-only fields are refused with it', async () => {
    const exportAs = (body: unknown) =>
      handleApiRequest(new Request(`${BASE}/api/v1/contracts/export`, { method: 'POST', headers: { 'X-API-Key': key }, body: JSON.stringify(body) }));
    const res = await exportAs({ format: 'ndjson' });
    expect(res.headers.get('content-type')).toBe('application/x-ndjson; charset=utf-8');
    expect(res.headers.get('x-events-cursor')).toMatch(/^[A-Za-z0-9_-]+$/);
    const lines = (await res.text()).split('\n');
    expect(lines.pop()).toBe('');
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) {
      const contract = JSON.parse(line) as { id: string };
      expect(contract).toEqual(((await call(`/contracts/${contract.id}`)).json as { data: { contract: unknown } }).data.contract);
    }
    for (const field of ['columns', 'date_format', 'bom'] as const) {
      const refused = await exportAs({ format: 'ndjson', [field]: field === 'columns' ? ['id'] : field === 'bom' ? true : 'excel' });
      expect(refused.status).toBe(400);
      expect((await refused.json()).error.details[0].param).toBe(field);
    }
  });
});
