import fc from 'fast-check';
import Papa from 'papaparse';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { buildOpenApiDocument } from '@/server/rest/openapi-document';
import { createResponseValidator } from '../helpers/openapi-validator';
import { type Answer, apiRequest, BASE, CLIENT_ADDRESS, type ErrorJson, PROXY_CLIENT_ADDRESS, send, V1 } from '../helpers/api';
import { renewalDecision } from '@/lib/renewal-dates';
import { createDemoWorld, type DemoUser, type DemoWorld, type ModelContract } from './support/world';
import { configureForFile } from '../helpers/config';

/**
 * Property: requests generated from the served OpenAPI document, valid and invalid, for
 * every operation, plus random methods and paths, never get a 5xx; every status is
 * documented for its operation (or is the 404/405 envelope off the document); every
 * JSON body validates against the document; every 200 export is CSV with the documented
 * columns. An independent oracle, written from the document's schemas and the data,
 * predicts the status and the rows of each answer.
 *
 * Fixed seed: a failure prints its seed and shrunk counterexample and replays the same.
 */

// Fixed for CI; FUZZ_SEED and FUZZ_RUNS explore further by hand.
configureForFile({ ...PROXY_CLIENT_ADDRESS, RATE_LIMIT_GENERAL_PER_WINDOW: '1000000', RATE_LIMIT_EXPORT_PER_WINDOW: '1000000', RATE_LIMIT_AUTH_FAILURES_PER_MINUTE: '1000000', RATE_LIMIT_CALENDAR_PER_HOUR: '1000000' });

const SEED = Number(process.env.FUZZ_SEED ?? 20261001);
const RUNS = Number(process.env.FUZZ_RUNS ?? 1500);

type Json = Record<string, unknown>;
interface Schema {
  type?: string;
  enum?: string[];
  format?: string;
  pattern?: string;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  items?: Schema;
  minItems?: number;
  uniqueItems?: boolean;
  properties?: Record<string, Schema>;
  additionalProperties?: boolean;
}
interface Parameter {
  name: string;
  in: 'query' | 'path' | 'header';
  required?: boolean;
  schema: Schema;
}
interface Operation {
  method: string;
  template: string;
  operationId: string;
  parameters: Parameter[];
  body?: Schema;
  keyHeader?: string;
}

// ------------------------------------------------------------------------------------
// The document

const document = buildOpenApiDocument(BASE);

function resolve(node: unknown): Schema {
  const ref = (node as { $ref?: string }).$ref;
  if (!ref) return node as Schema;
  return ref
    .slice(2)
    .split('/')
    .reduce<unknown>((at, part) => (at as Json)[part], document) as Schema;
}

const securitySchemes = ((document.components as Json).securitySchemes ?? {}) as Record<string, { in: string; name: string }>;
const documentedOperations: Operation[] = Object.entries(document.paths as Record<string, Record<string, Json>>).flatMap(([template, item]) =>
  Object.entries(item).map(([method, op]) => {
    const security = (op.security as Record<string, unknown>[] | undefined)?.flatMap((s) => Object.keys(s)) ?? [];
    const scheme = security.map((name) => securitySchemes[name]).find((s) => s?.in === 'header');
    const content = (op.requestBody as { content?: Record<string, { schema: unknown }> } | undefined)?.content;
    return {
      method: method.toUpperCase(),
      template,
      operationId: String(op.operationId),
      parameters: ((op.parameters as Parameter[] | undefined) ?? []).map((p) => ({ ...p, schema: resolve(p.schema) })),
      body: content?.['application/json'] ? resolve(content['application/json'].schema) : undefined,
      keyHeader: scheme?.name,
    };
  }),
);
// HEAD answers what GET does without the body, and the document needs no oracle: both
// have their own tests (tests/api/conventions.test.ts); the fuzz covers the data operations.
const operations = documentedOperations.filter((o) => o.method !== 'HEAD' && o.template !== '/openapi.json');
// "Columns: id, title, ..., or the body's ..." in the export operation's description.
const exportOperation = operations.find((o) => o.body !== undefined)!;
const documentedColumns = /Columns: ([a-z_, ]+?), or /
  .exec(String(((document.paths as Json)[exportOperation.template] as Record<string, Json>).post!.description))![1]!
  .split(', ');

// ------------------------------------------------------------------------------------
// The oracle: is a value valid for a schema of the document? (independent of zod)

function validScalar(schema: Schema, value: string): boolean {
  if (schema.enum) return schema.enum.includes(value);
  if (schema.type === 'integer') {
    // The API's documented decision: plain decimal integers (docs/api-guide.md, "Strict integers").
    if (!/^(0|[1-9][0-9]*)$/.test(value)) return false;
    const n = Number(value);
    return n >= (schema.minimum ?? -Infinity) && n <= (schema.maximum ?? Infinity);
  }
  if (schema.pattern && !new RegExp(schema.pattern).test(value)) return false;
  const length = [...value].length;
  if (length < (schema.minLength ?? 0) || length > (schema.maxLength ?? Infinity)) return false;
  return true;
}

/** A JSON value of a request body against its property's schema; the filter's text form, or undefined when invalid. */
function validJson(schema: Schema, value: unknown): string | undefined {
  if (schema.type === 'integer') {
    if (typeof value !== 'number' || !Number.isInteger(value)) return undefined;
    return value >= (schema.minimum ?? -Infinity) && value <= (schema.maximum ?? Infinity) ? String(value) : undefined;
  }
  if (schema.type === 'boolean') return typeof value === 'boolean' ? String(value) : undefined;
  if (schema.type === 'array') {
    if (!Array.isArray(value) || value.length < (schema.minItems ?? 0)) return undefined;
    if (schema.uniqueItems && new Set(value).size !== value.length) return undefined;
    if (!value.every((item) => validJson(schema.items!, item) !== undefined)) return undefined;
    return value.join(',');
  }
  return typeof value === 'string' && validScalar(schema, value) ? canonical(schema, value) : undefined;
}

/** UUIDs name the same thing in any case (RFC 9562); the API compares them lower-cased. */
const canonical = (schema: Schema, value: string) => (schema.format === 'uuid' ? value.toLowerCase() : value);

function validBody(schema: Schema, text: string | undefined): { valid: boolean; filters: Record<string, string> } {
  if (text === undefined || text.trim() === '') return { valid: true, filters: {} };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { valid: false, filters: {} };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return { valid: false, filters: {} };
  const filters: Record<string, string> = {};
  for (const [name, v] of Object.entries(value)) {
    const property = schema.properties?.[name];
    if (!property) {
      if (schema.additionalProperties === false) return { valid: false, filters };
      continue;
    }
    const text = validJson(property, v);
    if (text === undefined) return { valid: false, filters };
    filters[name] = text;
  }
  return { valid: true, filters };
}

// ------------------------------------------------------------------------------------
// Generators, from the document

let world: DemoWorld;
let validate: Awaited<ReturnType<typeof createResponseValidator>>;

type KeyChoice = { kind: 'valid'; user: DemoUser; decorate: 'none' | 'padded' } | { kind: 'bad'; value: string | null };

interface Generated {
  operation?: Operation; // undefined: a random path or method off the document
  method: string;
  path: string; // below /api/v1, encoded
  query: [string, string][];
  headers: [string, string][];
  body?: string;
  key: KeyChoice;
  // what the generator chose, for the oracle
  paramValues: Record<string, string[]>;
}

const userArb = fc.constantFrom<DemoUser>('alice', 'bob', 'carol');
const dateArb = fc
  .date({ min: new Date('0001-01-01T00:00:00Z'), max: new Date('9999-12-31T00:00:00Z'), noInvalidDate: true })
  .map((d) => d.toISOString().slice(0, 10));

const keyArb: fc.Arbitrary<KeyChoice> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ kind: fc.constant('valid' as const), user: userArb, decorate: fc.constantFrom('none' as const, 'padded' as const) }) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('bad' as const),
      value: fc.oneof(
        fc.constant(null),
        fc.constantFrom('revoked', 'expired', 'unknown', 'badChecksum', 'garbage', 'truncated').map((k) => `@${k}`),
        fc.string({ unit: 'grapheme-ascii', maxLength: 60 }),
        userArb.map((u) => `@lower:${u}`),
      ),
    }),
  },
);

const edgeStrings = ['', ' ', '0', '-1', '1.5', '1e1', '05', '+5', '0x10', ' 5', 'null', 'true', '[]', '{}', '%', '101', '9'.repeat(20), 'ǅ', '١٢'];

/** A value for a parameter: mostly valid for its schema, often not. */
function valueArb(schema: Schema): fc.Arbitrary<string> {
  const valid: fc.Arbitrary<string>[] = [];
  if (schema.enum) valid.push(fc.constantFrom(...schema.enum));
  else if (schema.type === 'integer') {
    const min = schema.minimum ?? 0;
    valid.push(fc.integer({ min, max: schema.maximum ?? min + 200 }).map(String));
  } else if (schema.format === 'uuid') {
    const known = [...world.contracts.map((c) => c.id), ...world.contracts.flatMap((c) => (c.organizationId ? [c.organizationId] : []))];
    valid.push(fc.constantFrom(...known), fc.constantFrom(...known).map((id) => id.toUpperCase()), fc.uuid({ version: 4 }));
  } else if (schema.format === 'date') {
    valid.push(dateArb, fc.constantFrom(...world.contracts.flatMap((c) => [c.expirationDate, c.renewalDate]).filter((d): d is string => d !== null)));
  } else if (schema.format === 'date-time') {
    valid.push(
      fc.date({ min: new Date('0001-01-01T00:00:00Z'), max: new Date('9999-12-31T23:59:59Z'), noInvalidDate: true }).map((d) => d.toISOString()),
      fc.constantFrom(...world.contracts.map((c) => c.updatedAt.toISOString())),
      fc.constantFrom(...world.contracts.map((c) => c.updatedAt.toISOString().replace('Z', '+00:00'))),
    );
  } else if (schema.pattern) {
    // A value the pattern allows (an event id, a list of event types), within maxLength.
    valid.push(fc.stringMatching(new RegExp(schema.pattern)).filter((v) => v.length <= (schema.maxLength ?? Infinity)));
  } else valid.push(fc.string({ maxLength: 20 }), fc.constantFrom('acme', 'LEASE', 'Globex', '%', '_', "'", 'Berlin'));
  const invalid: fc.Arbitrary<string>[] = [fc.constantFrom(...edgeStrings), fc.string({ unit: 'grapheme', maxLength: 40 })];
  if (schema.type === 'integer') {
    invalid.push(fc.constantFrom(String((schema.minimum ?? 0) - 1), String((schema.maximum ?? 1e15) + 1)));
  }
  if (schema.enum) invalid.push(fc.constantFrom(...schema.enum).map((v) => v.toUpperCase()));
  if (schema.format === 'uuid') invalid.push(fc.uuid({ version: 4 }).map((u) => `${u}0`), fc.uuid({ version: 4 }).map((u) => u.replaceAll('-', '')));
  if (schema.format === 'date') invalid.push(fc.constantFrom('2027-02-29', '2027-13-01', '0000-01-01', '2027-1-1', '20270101', '2027-01-01T00:00:00Z'));
  if (schema.format === 'date-time') invalid.push(fc.constantFrom('2026-11-01', '2026-11-01T00:00:00', '0000-06-01T00:00:00Z', '2026-11-01 00:00:00Z'));
  return fc.oneof({ weight: 3, arbitrary: fc.oneof(...valid) }, { weight: 2, arbitrary: fc.oneof(...invalid) });
}

/** A parameter: absent, present once (the common case) or twice. */
function occurrencesArb(p: Parameter): fc.Arbitrary<string[]> {
  const value = valueArb(p.schema);
  // A path segment that is empty, "." or ".." would address another path: not this operation.
  if (p.in === 'path') return value.filter((v) => !['', '.', '..'].includes(v)).map((v) => [v]);
  return fc.oneof(
    { weight: p.required ? 0 : 3, arbitrary: fc.constant<string[]>([]) },
    { weight: 6, arbitrary: value.map((v) => [v]) },
    { weight: 1, arbitrary: fc.tuple(value, value).map((pair): string[] => pair) },
  );
}

/** A JSON value for a body property: mostly of its type, sometimes the text form a query would use. */
function jsonValueArb(schema: Schema): fc.Arbitrary<unknown> {
  if (schema.type === 'integer') {
    const min = schema.minimum ?? 0;
    return fc.oneof(
      { weight: 4, arbitrary: fc.integer({ min, max: Math.min(schema.maximum ?? min + 200, min + 400) }) },
      { weight: 1, arbitrary: fc.constantFrom<unknown>(min - 1, (schema.maximum ?? 1e9) + 1, 1.5, String(min), null) },
    );
  }
  if (schema.type === 'boolean') return fc.oneof({ weight: 4, arbitrary: fc.boolean() }, { weight: 1, arbitrary: fc.constantFrom<unknown>('true', 'false', 0, 1, null) });
  if (schema.type === 'array') {
    const names = schema.items!.enum!;
    return fc.oneof(
      { weight: 4, arbitrary: fc.shuffledSubarray(names, { minLength: 1 }) },
      { weight: 1, arbitrary: fc.constantFrom<unknown>([], [names[0], names[0]], ['nope'], names.join(','), null) },
    );
  }
  return valueArb(schema);
}

function bodyArb(schema: Schema): fc.Arbitrary<string | undefined> {
  const props = Object.entries(schema.properties ?? {});
  // A few fields at a time, for the same reason as the query's parameters.
  const validObject = fc
    .shuffledSubarray(props, { maxLength: Math.min(4, props.length) })
    .chain((chosen) => fc.record(Object.fromEntries(chosen.map(([name, s]) => [name, jsonValueArb(s)]))))
    .map((o) => JSON.stringify(o));
  return fc.oneof(
    { weight: 2, arbitrary: fc.constantFrom(undefined, '', '{}', '  \n') },
    { weight: 5, arbitrary: validObject },
    { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 2 }).map((v) => JSON.stringify(v)) },
    { weight: 1, arbitrary: fc.dictionary(fc.string({ maxLength: 12 }), fc.jsonValue({ maxDepth: 1 }), { maxKeys: 3 }).map((o) => JSON.stringify(o)) },
    { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 60 }) },
    { weight: 1, arbitrary: fc.constantFrom('{"status":', '{"status":"completed"', 'nul', JSON.stringify({ status: 'completed', pad: 'x'.repeat(17_000) })) },
  );
}

const extraHeadersArb = fc.subarray([
  ['Content-Type', 'application/json'],
  ['Content-Type', 'text/plain'],
  ['Content-Type', 'multipart/form-data; boundary=x'],
  ['Accept', 'text/html'],
  ['Accept', 'application/xml'],
  ['X-Forwarded-For', '203.0.113.7, 198.51.100.2'],
  ['X-HTTP-Method-Override', 'DELETE'],
  ['Origin', 'https://evil.example'],
] as [string, string][]);

// Unknown query parameters are a 400 whatever else the request holds, so they come in one
// request of five: the other answers (200, 403, 404) stay reachable.
const unknownQueryArb = fc.oneof(
  { weight: 4, arbitrary: fc.constant<[string, string][]>([]) },
  {
    weight: 1,
    arbitrary: fc.array(
      fc.tuple(fc.constantFrom('utm_source', 'LIMIT', 'Status', 'order', 'api_key', '_', 'limit[]', 'filter[status]', 'Q'), fc.string({ maxLength: 10 })),
      { minLength: 1, maxLength: 2 },
    ),
  },
);

/** A calendar feed token: a user's active one, a revoked one, an API key in its place, or anything. */
function feedTokenArb(): fc.Arbitrary<string[]> {
  return fc
    .oneof(
      { weight: 3, arbitrary: userArb.map((u) => world.feedTokens[u]) },
      { weight: 1, arbitrary: fc.constantFrom(world.revokedFeedToken, world.keys.alice, world.feedTokens.bob.slice(0, -1), world.feedTokens.carol.toUpperCase()) },
      { weight: 1, arbitrary: fc.string({ unit: 'grapheme', minLength: 1, maxLength: 50 }).filter((v) => !['.', '..'].includes(v)) },
    )
    .map((v) => [v]);
}

function operationRequestArb(op: Operation): fc.Arbitrary<Generated> {
  const params = op.parameters.filter((p) => p.in !== 'header');
  return fc
    .record({
      // A few of the optional parameters at a time: with all of them, nearly every request
      // would hold an invalid one and the 200 and 403 answers would go untested.
      values: fc
        .constant(params.filter((p) => !p.required).map((p) => p.name))
        .chain((names) => fc.shuffledSubarray(names, { maxLength: Math.min(4, names.length) }))
        .chain((chosen) =>
          fc.tuple(
            ...params.map((p) =>
              p.in === 'path' && p.name === 'token' ? feedTokenArb() : p.required || chosen.includes(p.name) ? occurrencesArb(p) : fc.constant<string[]>([]),
            ),
          ),
        ),
      pathId: fc.oneof(
        { weight: 5, arbitrary: fc.constant(undefined) },
        { weight: 1, arbitrary: fc.constantFrom(...world.contracts.map((c) => c.id.toUpperCase())) },
      ),
      unknown: unknownQueryArb,
      key: keyArb,
      headers: extraHeadersArb,
      body: op.body ? bodyArb(op.body) : fc.constant(undefined),
    })
    .map(({ values, pathId, unknown, key, headers, body }) => {
      const paramValues: Record<string, string[]> = {};
      params.forEach((p, i) => (paramValues[p.name] = values[i]!));
      let path = op.template;
      const query: [string, string][] = [];
      for (const p of params) {
        if (p.in === 'path') {
          if (pathId !== undefined && p.schema.format === 'uuid') paramValues[p.name] = [pathId];
          path = path.replace(`{${p.name}}`, encodeURIComponent(paramValues[p.name]![0] ?? ''));
        } else for (const v of paramValues[p.name]!) query.push([p.name, v]);
      }
      query.push(...unknown);
      return { operation: op, method: op.method, path, query, headers, body, key, paramValues };
    });
}

const offDocumentArb: fc.Arbitrary<Generated> = fc
  .record({
    // HEAD is left to Next.js, which answers it with the GET handler's answer (checked on
    // the build by npm run soak); called directly, trpc-to-openapi answers it 204.
    method: fc.constantFrom('GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'),
    path: fc.oneof(
      fc.constantFrom('', '/', '/contracts/', '/contracts/export/', '/contracts/a/b', '/contract', '/CONTRACTS', '/v2/contracts', '/contracts/export/x', '/openapi.json', '/contracts/%2e%2e/x'),
      ...operations.map((o) => fc.constant(o.template.replace(/\{[^}]+\}/g, '3f2b6c1e-8a4d-4c2e-9b7a-0d1e2f3a4b5c'))),
      fc.webPath().map((p) => (p.startsWith('/') ? p : `/${p}`)),
    ),
    key: keyArb,
  })
  .filter(({ method, path }) => !documentedOperations.some((o) => o.method === method && new RegExp(`^${o.template.replace(/\{[^}]+\}/g, '[^/]+')}/?$`).test(path)))
  .map(({ method, path, key }) => ({ method, path, query: [], headers: [], key, paramValues: {}, body: method === 'GET' ? undefined : '{}' }));

// ------------------------------------------------------------------------------------
// Sending and checking

function keyValue(choice: KeyChoice): string | null {
  if (choice.kind === 'valid') return choice.decorate === 'padded' ? ` ${world.keys[choice.user]}\t` : world.keys[choice.user];
  const v = choice.value;
  if (v === null) return null;
  if (v.startsWith('@lower:')) return world.keys[v.slice(7) as DemoUser].toLowerCase();
  if (v.startsWith('@')) return world.badKeys[v.slice(1) as keyof DemoWorld['badKeys']];
  return v;
}

function toRequest(g: Generated): Request | undefined {
  const url = new URL(`${BASE}${V1}${g.path}`);
  for (const [name, value] of g.query) url.searchParams.append(name, value);
  try {
    const headers = new Headers([['X-Real-IP', CLIENT_ADDRESS], ...g.headers]);
    const key = keyValue(g.key);
    if (key !== null) headers.set(g.operation?.keyHeader ?? 'X-API-Key', key);
    return new Request(url, { method: g.method, headers, body: g.method === 'GET' || g.method === 'HEAD' ? undefined : g.body });
  } catch {
    return undefined; // a header value fetch refuses (control characters): not sendable over HTTP either
  }
}

/** What the oracle expects: an exact status, and for 200 the contracts (or calendar events) of the answer. */
function expectation(g: Generated): { status: number; rows?: string[] } {
  const op = g.operation!;
  // Unknown query parameters are refused once the caller is known (after authentication).
  const unknownQuery = g.query.some(([name]) => !op.parameters.some((p) => p.in === 'query' && p.name === name));
  if (op.template.includes('{token}')) {
    const feed = feedExpectation(g.paramValues.token![0]!);
    return feed.status === 200 && unknownQuery ? { status: 400 } : feed;
  }
  if (g.key.kind === 'bad') return { status: 401 };
  if (unknownQuery) return { status: 400 };
  const userId = world.userIdOf(g.key.user);
  for (const p of op.parameters.filter((q) => q.in !== 'header')) {
    const values = g.paramValues[p.name]!;
    if (values.length > 1) return { status: 400 };
    if (values.length === 1 && !validScalar(p.schema, values[0]!)) return { status: 400 };
  }
  // Only the API writes cursors (opaque, checked): whatever the generator makes is refused.
  if (g.paramValues.cursor?.length === 1) return { status: 400 };
  let filters: Record<string, string> = {};
  if (op.body) {
    const body = validBody(op.body, g.body);
    if (!body.valid) return { status: 400 };
    filters = body.filters;
  } else {
    for (const p of op.parameters) {
      const value = g.paramValues[p.name]?.[0];
      if (value !== undefined) filters[p.name] = canonical(p.schema, value);
    }
  }
  // The event list: its answers' statuses (its contents and order: tests/api/events.test.ts
  // and tests/db/event-list.test.ts). A generated event id names no event.
  if (op.template.startsWith('/events')) return op.template.includes('{id}') ? { status: 404 } : { status: 200 };
  if (op.template.includes('{id}')) {
    const id = g.paramValues.id![0]!.toLowerCase();
    const contract = world.contracts.find((c) => c.id === id);
    return contract && world.canSee(userId, contract) ? { status: 200, rows: [id] } : { status: 404 };
  }
  const org = filters.organization_id;
  if (org !== undefined && !world.organizationsOf(userId).includes(org)) return { status: 403 };
  const today = new Date().toISOString().slice(0, 10);
  const rows = world
    .visible(userId)
    .filter((c) => matchesFilters(c, filters, today))
    .sort(sortOrder(filters.sort ?? '-created_at', today))
    .map((c) => c.id);
  return { status: 200, rows };
}

/**
 * The feed: one event per expiration date, next renewal and notice deadline of the owner's completed
 * contracts, from 365 days before today on; anything but an active feed token is a 404.
 */
function feedExpectation(token: string): { status: number; rows?: string[] } {
  const user = (Object.keys(world.feedTokens) as DemoUser[]).find((u) => world.feedTokens[u] === token);
  if (!user) return { status: 404 };
  const today = new Date().toISOString().slice(0, 10);
  const since = plusDays(today, -365);
  const events = world
    .visible(world.userIdOf(user))
    .filter((c) => c.status === 'completed')
    .flatMap((c) => {
      const { nextRenewalDate, noticeDeadline } = decisionOf(c, today);
      return [c.expirationDate, nextRenewalDate, noticeDeadline].filter((d): d is string => d !== null && d >= since).map((d) => `${c.id} ${d}`);
    });
  return { status: 200, rows: events };
}

// The documented meaning of each filter and sort, written from the document's descriptions.

const plusDays = (date: string, days: number) => new Date(Date.parse(`${date}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10);

/** The renewal decision as the document states it (the rule itself is held by tests/contracts/renewal-dates.test.ts). */
const decisionOf = (c: ModelContract, today: string) => renewalDecision(c, today);

function matchesFilters(c: ModelContract, f: Record<string, string>, today: string): boolean {
  // Extracted data exists only once completed.
  const done = c.status === 'completed';
  const expiration = done ? c.expirationDate : null;
  // The renewal filters read the next renewal, the notice filters the notice deadline.
  const renewal = done ? decisionOf(c, today).nextRenewalDate : null;
  const notice = done ? decisionOf(c, today).noticeDeadline : null;
  const within = (date: string | null, days: string | undefined) =>
    days === undefined || (date !== null && date >= today && date <= plusDays(today, Number(days)));
  const before = (date: string | null, bound: string | undefined) => bound === undefined || (date !== null && date < bound);
  const after = (date: string | null, bound: string | undefined) => bound === undefined || (date !== null && date > bound);
  const q = f.q?.toLowerCase();
  return (
    (f.status === undefined || c.status === f.status) &&
    (f.organization_id === undefined || c.organizationId === f.organization_id) &&
    within(expiration, f.expiring_within_days) &&
    within(renewal, f.renewing_within_days) &&
    before(expiration, f.expires_before) &&
    after(expiration, f.expires_after) &&
    before(renewal, f.renews_before) &&
    after(renewal, f.renews_after) &&
    within(notice, f.notice_within_days) &&
    before(notice, f.notice_before) &&
    after(notice, f.notice_after) &&
    (f.auto_renewal === undefined || (done && c.autoRenewal === (f.auto_renewal === 'true'))) &&
    (q === undefined || [c.title, done ? c.provider : null, done ? c.client : null].some((t) => t !== null && t.toLowerCase().includes(q))) &&
    (f.updated_since === undefined || c.updatedAt.getTime() >= Date.parse(f.updated_since))
  );
}

/** A field, or -field; nulls last either way; ties by id in the same direction. */
function sortOrder(sort: string, today: string): (a: ModelContract, b: ModelContract) => number {
  const descending = sort.startsWith('-');
  const field = descending ? sort.slice(1) : sort;
  const keyOf = (c: ModelContract): string | number | null => {
    const done = c.status === 'completed';
    switch (field) {
      case 'created_at': return c.createdAt.getTime();
      case 'updated_at': return c.updatedAt.getTime();
      case 'expiration_date': return done ? c.expirationDate : null;
      case 'renewal_date': return done ? c.renewalDate : null;
      case 'next_renewal_date': return done ? decisionOf(c, today).nextRenewalDate : null;
      case 'notice_deadline': return done ? decisionOf(c, today).noticeDeadline : null;
      case 'contract_value': return done ? c.contractValue : null;
      case 'title': return c.title.toLowerCase();
      default: throw new Error(`sort ${sort} is not documented`);
    }
  };
  const direction = descending ? -1 : 1;
  return (a, b) => {
    const ka = keyOf(a);
    const kb = keyOf(b);
    if (ka === null || kb === null) {
      if (ka !== kb) return ka === null ? 1 : -1;
    } else if (ka !== kb) return (ka < kb ? -1 : 1) * direction;
    return (a.id < b.id ? -1 : a.id > b.id ? 1 : 0) * direction;
  };
}

/** How often each operation answered each status: the run must cover every class. */
const seen = new Map<string, Set<number>>();

function check(g: Generated, answer: Answer) {
  const label = g.operation?.operationId ?? 'off-document';
  seen.set(label, (seen.get(label) ?? new Set()).add(answer.status));
  const where = `${g.method} ${g.path}?${new URLSearchParams(g.query)} key=${JSON.stringify(g.key)} body=${JSON.stringify(g.body)?.slice(0, 80)}\n-> ${answer.status} ${answer.text.slice(0, 300)}`;
  expect(answer.status, where).toBeLessThan(500);
  expect(answer.headers.get('x-request-id'), where).toMatch(/^req_[0-9a-f]{32}$/);
  const type = answer.headers.get('content-type');
  expect(['application/json; charset=utf-8', 'text/csv; charset=utf-8', 'text/calendar; charset=utf-8'], where).toContain(type);
  validate(g.method, new URL(`${BASE}${V1}${g.path}`).pathname.slice(V1.length), answer);

  if (!g.operation) {
    expect([404, 405], where).toContain(answer.status);
    expect((answer.json as ErrorJson).error.code, where).toBe(answer.status === 404 ? 'not_found' : 'method_not_allowed');
    if (answer.status === 405) expect(answer.headers.get('allow'), where).toBeTruthy();
    return;
  }
  const expected = expectation(g);
  expect(answer.status, where).toBe(expected.status);
  if (answer.status >= 400) {
    expect((answer.json as ErrorJson).request_id, where).toBe(answer.headers.get('x-request-id'));
    return;
  }
  if (type?.startsWith('text/calendar')) {
    expect(answer.text.startsWith('BEGIN:VCALENDAR\r\n'), where).toBe(true);
    expect(answer.text.endsWith('END:VCALENDAR\r\n'), where).toBe(true);
    expect(answer.text.match(/^BEGIN:VEVENT\r$/gm)?.length ?? 0, where).toBe(expected.rows!.length);
    return;
  }
  if (type?.startsWith('text/csv')) {
    const body = g.body?.trim() ? (JSON.parse(g.body) as { columns?: string[]; bom?: boolean }) : {};
    expect(answer.text.startsWith('\uFEFF'), where).toBe(body.bom === true);
    const text = answer.text.replace(/^\uFEFF/, '');
    expect(text.endsWith('\r\n'), where).toBe(true);
    const parsed = Papa.parse<string[]>(text.slice(0, -2), { skipEmptyLines: false });
    expect(parsed.errors, where).toEqual([]);
    const columns = body.columns ?? documentedColumns;
    expect(parsed.data[0], where).toEqual(columns);
    const records = parsed.data.slice(1);
    expect(records.length, where).toBe(expected.rows!.length);
    if (columns.includes('id')) expect(records.map((r) => r[columns.indexOf('id')]), where).toEqual(expected.rows);
    return;
  }
  const data = (answer.json as { data: Json }).data;
  if (data.contract) expect([(data.contract as { id: string }).id], where).toEqual(expected.rows);
  if (data.contracts) {
    const { limit, offset, total } = data.pagination as { limit: number; offset: number; total: number };
    expect(total, where).toBe(expected.rows!.length);
    expect((data.contracts as { id: string }[]).map((c) => c.id), where).toEqual(expected.rows!.slice(offset, offset + limit));
  }
}

beforeAll(async () => {
  // openapi-backend's Ajv warns about every format it does not check (uuid, date-time).
  const warn = console.warn.bind(console);
  vi.spyOn(console, 'warn').mockImplementation((...args: unknown[]) => {
    if (!String(args[0]).startsWith('unknown format')) warn(...args);
  });
  world = await createDemoWorld();
  validate = await createResponseValidator(document);
});
afterAll(async () => {
  vi.restoreAllMocks();
  await world?.handle.close();
});

describe('requests generated from the OpenAPI document', () => {
  it('the fuzz covers the six data operations: five with the key header, the calendar feed with a token in its path', () => {
    expect(documentedOperations).toHaveLength(13);
    expect(operations.map((o) => `${o.method} ${o.template}`).sort()).toEqual([
      'GET /calendar/{token}.ics',
      'GET /contracts',
      'GET /contracts/{id}',
      'GET /events',
      'GET /events/{id}',
      'POST /contracts/export',
    ]);
    for (const op of operations) expect(op.keyHeader).toBe(op.template.includes('{token}') ? undefined : 'X-API-Key');
    expect(documentedColumns.length).toBeGreaterThan(10);
  });

  it(`never 5xx, always documented, and as the oracle predicts (${RUNS} requests, seed ${SEED})`, async () => {
    const requestArb = fc.oneof({ weight: 8, arbitrary: fc.oneof(...operations.map(operationRequestArb)) }, { weight: 1, arbitrary: offDocumentArb });
    await fc.assert(
      fc.asyncProperty(requestArb, async (g) => {
        const req = toRequest(g);
        if (!req) return;
        check(g, await send(req));
      }),
      { seed: SEED, numRuns: RUNS },
    );
    // The generator reached every answer of every operation.
    const covered = Object.fromEntries([...seen].map(([label, statuses]) => [label, [...statuses].sort()]));
    expect(covered).toEqual({
      listContracts: [200, 400, 401, 403],
      getContract: [200, 400, 401, 404],
      exportContracts: [200, 400, 401, 403],
      listEvents: [200, 400, 401],
      getEvent: [400, 401, 404],
      getCalendarFeed: [200, 400, 404],
      'off-document': [404, 405],
    });
  }, 60_000);
});

describe('regressions found by this suite', () => {
  it('an organisation id in capitals names the same organisation', async () => {
    const orgId = world.organizationsOf(world.userIdOf('bob'))[0]!;
    const lower = await send(apiRequest('GET', `/contracts?organization_id=${orgId}`, { key: world.keys.bob }));
    const upper = await send(apiRequest('GET', `/contracts?organization_id=${orgId.toUpperCase()}`, { key: world.keys.bob }));
    expect(lower.status).toBe(200);
    expect(upper.json).toEqual(lower.json);
    const body = (id: string) => JSON.stringify({ organization_id: id });
    const exportLower = await send(apiRequest('POST', '/contracts/export', { key: world.keys.bob, body: body(orgId) }));
    const exportUpper = await send(apiRequest('POST', '/contracts/export', { key: world.keys.bob, body: body(orgId.toUpperCase()) }));
    expect(exportUpper.status).toBe(200);
    expect(exportUpper.text).toBe(exportLower.text);
  });

  it('the largest offset the document allows is accepted, the next one is a 400', async () => {
    const schema = operations.find((o) => o.operationId === 'listContracts')!.parameters.find((p) => p.name === 'offset')!.schema;
    expect(schema.maximum).toBeDefined();
    const at = await send(apiRequest('GET', `/contracts?offset=${schema.maximum}`, { key: world.keys.bob }));
    expect(at.status).toBe(200);
    expect((at.json as { data: { contracts: unknown[] } }).data.contracts).toEqual([]);
    const above = await send(apiRequest('GET', `/contracts?offset=${BigInt(schema.maximum!) + 1n}`, { key: world.keys.bob }));
    expect(above.status).toBe(400);
  });
});
