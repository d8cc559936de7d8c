import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { BASELINE_BASE_URL, BASELINE_FILE, checkBaseline, updateBaseline } from '@/scripts/openapi/baseline';
import { breakingChanges } from '@/scripts/openapi/breaking-changes';
import { contractOf } from '@/scripts/openapi/contract';
import { CHANGELOG, changelogVersion, type ChangelogEntry } from '@/server/rest/changelog';
import { DEPRECATIONS } from '@/server/rest/deprecations';
import { buildOpenApiDocument } from '@/server/rest/openapi-document';

/**
 * The breaking-change check (scripts/openapi/breaking-changes.ts, docs/api-changes.md):
 * each case changes a copy of today's document the way a careless change of the code
 * would, and the check must name it; each additive case must pass. Then the baseline's
 * rules (scripts/openapi/baseline.ts), and today's document against the committed
 * baseline, as CI runs it.
 */

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- mutating a JSON document in place

const today = buildOpenApiDocument(BASELINE_BASE_URL) as Json;
const copy = (): Json => structuredClone(today);
const schemas = (d: Json) => d.components.schemas as Json;
const param = (d: Json, path: string, name: string, method = 'get') => (d.paths[path][method].parameters as Json[]).find((p) => p.name === name)!;
/** Every security alternative of every operation, without the scheme named. */
const dropScheme = (d: Json, scheme: string) => {
  delete d.components.securitySchemes[scheme];
  for (const item of Object.values(d.paths as Json)) for (const operation of Object.values(item as Json)) if ((operation as Json).security) (operation as Json).security = ((operation as Json).security as Json[]).filter((s) => !s[scheme]);
};

interface Case {
  name: string;
  change: (doc: Json) => void;
  /** The base document, when the case needs one that differs from today's. */
  base?: (doc: Json) => void;
  /** Words the report must contain, and where. */
  expected?: { at: string; message: string };
}

const BREAKING: Case[] = [
  { name: 'an operation removed', change: (d) => delete d.paths['/contracts/export'].post, expected: { at: 'POST /contracts/export', message: 'operation removed' } },
  { name: 'HEAD removed', change: (d) => delete d.paths['/contracts'].head, expected: { at: 'HEAD /contracts', message: 'operation removed' } },
  { name: 'a path removed', change: (d) => delete d.paths['/calendar/{token}.ics'], expected: { at: 'GET /calendar/{token}.ics', message: 'operation removed' } },
  { name: 'a webhook event removed', change: (d) => delete d.webhooks['contract.deleted'], expected: { at: 'webhook contract.deleted', message: 'event removed' } },
  {
    name: 'a query parameter removed',
    change: (d) => (d.paths['/contracts'].get.parameters = d.paths['/contracts'].get.parameters.filter((p: Json) => p.name !== 'q')),
    expected: { at: 'GET /contracts', message: 'query parameter `q` removed' },
  },
  { name: 'a query parameter renamed', change: (d) => (param(d, '/contracts', 'status').name = 'state'), expected: { at: 'GET /contracts', message: 'query parameter `status` removed (or renamed)' } },
  {
    name: 'a new required parameter',
    change: (d) => d.paths['/contracts'].get.parameters.push({ name: 'tenant', in: 'query', required: true, schema: { type: 'string' } }),
    expected: { at: 'GET /contracts', message: 'new required query parameter `tenant`' },
  },
  { name: 'an optional parameter made required', change: (d) => (param(d, '/contracts', 'limit').required = true), expected: { at: 'GET /contracts', message: 'query parameter `limit` is now required' } },
  {
    name: 'an enum value removed from an accepted parameter',
    change: (d) => (param(d, '/contracts', 'status').schema.enum = ['pending', 'processing', 'completed']),
    expected: { at: 'GET /contracts: query parameter `status`', message: 'value "failed" no longer accepted' },
  },
  {
    name: 'an enum value removed from an accepted body field',
    change: (d) => (schemas(d).ExportRequest.properties.date_format.enum = ['iso']),
    expected: { at: 'POST /contracts/export request body application/json → date_format', message: 'value "excel" no longer accepted' },
  },
  {
    name: 'a parameter\'s type changed',
    change: (d) => (param(d, '/contracts', 'expiring_within_days').schema.type = 'string'),
    expected: { at: 'GET /contracts: query parameter `expiring_within_days`', message: 'type changed: integer no longer accepted' },
  },
  { name: 'a maximum lowered', change: (d) => (param(d, '/contracts', 'limit').schema.maximum = 50), expected: { at: 'GET /contracts: query parameter `limit`', message: 'maximum lowered: 100 → 50' } },
  { name: 'a minimum raised', change: (d) => (param(d, '/contracts', 'offset').schema.minimum = 1), expected: { at: 'GET /contracts: query parameter `offset`', message: 'minimum raised: 0 → 1' } },
  { name: 'a maxLength lowered', change: (d) => (param(d, '/contracts', 'q').schema.maxLength = 100), expected: { at: 'GET /contracts: query parameter `q`', message: 'maxLength lowered: 200 → 100' } },
  {
    name: 'a maxLength added to a body field',
    change: (d) => (schemas(d).ExportRequest.properties.updated_since.maxLength = 20),
    expected: { at: 'POST /contracts/export request body application/json → updated_since', message: 'maxLength added' },
  },
  {
    name: 'a pattern added',
    change: (d) => (param(d, '/calendar/{token}.ics', 'token').schema.pattern = '^cdcal_'),
    expected: { at: 'GET /calendar/{token}.ics: path parameter `token`', message: 'pattern added' },
  },
  { name: 'a pattern changed', change: (d) => (param(d, '/contracts', 'cursor').schema.pattern = '^[a-z]+$'), expected: { at: 'GET /contracts: query parameter `cursor`', message: 'pattern changed' } },
  {
    name: 'additionalProperties closed',
    base: (d) => delete schemas(d).ExportRequest.additionalProperties,
    change: () => undefined,
    expected: { at: 'POST /contracts/export request body application/json', message: 'closed (additionalProperties: false)' },
  },
  {
    name: 'a body field removed',
    change: (d) => delete schemas(d).ExportRequest.properties.bom,
    expected: { at: 'POST /contracts/export request body application/json', message: 'field `bom` removed' },
  },
  { name: 'a body field made required', change: (d) => (schemas(d).ExportRequest.required = ['status']), expected: { at: 'POST /contracts/export request body application/json', message: 'field `status` is now required' } },
  { name: 'the request body made required', change: (d) => (d.paths['/contracts/export'].post.requestBody.required = true), expected: { at: 'POST /contracts/export', message: 'the request body is now required' } },
  {
    name: 'a request media type removed',
    change: (d) => delete d.paths['/contracts/export'].post.requestBody.content['text/plain'],
    expected: { at: 'POST /contracts/export request body', message: 'media type text/plain no longer accepted' },
  },
  { name: 'a default changed', change: (d) => (param(d, '/contracts', 'limit').schema.default = 20), expected: { at: 'GET /contracts: query parameter `limit`', message: 'default changed: 50 → 20' } },
  {
    name: 'a response field removed',
    change: (d) => {
      delete schemas(d).ContractSummary.properties.file_size;
      schemas(d).ContractSummary.required = schemas(d).ContractSummary.required.filter((f: string) => f !== 'file_size');
    },
    expected: { at: 'GET /contracts 200 application/json → data.contracts[]', message: 'field `file_size` removed' },
  },
  {
    name: 'a response field renamed',
    change: (d) => {
      const detail = schemas(d).ContractDetail;
      detail.properties = Object.fromEntries(Object.entries(detail.properties).map(([k, v]) => [k === 'title' ? 'name' : k, v]));
      detail.required = detail.required.map((f: string) => (f === 'title' ? 'name' : f));
    },
    expected: { at: 'GET /contracts/{id} 200 application/json → data.contract', message: 'field `title` removed (or renamed)' },
  },
  {
    name: 'a response field\'s type changed',
    change: (d) => (schemas(d).ContractSummary.properties.file_size.type = 'string'),
    expected: { at: 'GET /contracts 200 application/json → data.contracts[].file_size', message: 'type changed: may now be string' },
  },
  {
    name: 'a response field made nullable',
    change: (d) => (schemas(d).ContractSummary.properties.title = { anyOf: [{ type: 'string' }, { type: 'null' }] }),
    expected: { at: 'GET /contracts 200 application/json → data.contracts[].title', message: 'may now be null' },
  },
  {
    name: 'a required response field made optional',
    change: (d) => (schemas(d).Pagination.required = schemas(d).Pagination.required.filter((f: string) => f !== 'next_cursor')),
    expected: { at: 'GET /contracts 200 application/json → data.pagination', message: 'field `next_cursor` may now be absent' },
  },
  { name: 'a response constant changed', change: (d) => (schemas(d).ContractList.properties.success.const = false), expected: { at: 'GET /contracts 200 application/json → success', message: 'no longer always true' } },
  { name: 'a response status removed', change: (d) => delete d.paths['/contracts/{id}'].get.responses['404'], expected: { at: 'GET /contracts/{id} 404', message: 'response 404 removed' } },
  {
    name: 'a response media type removed',
    change: (d) => delete d.paths['/contracts/export'].post.responses['200'].content['text/csv'],
    expected: { at: 'POST /contracts/export 200', message: 'media type text/csv no longer answered' },
  },
  { name: 'a response header removed', change: (d) => delete d.paths['/contracts'].get.responses['200'].headers.ETag, expected: { at: 'GET /contracts 200', message: 'header ETag removed' } },
  { name: 'a required response header made optional', change: (d) => (d.components.headers['X-Request-Id'].required = false), expected: { at: 'GET /contracts 200', message: 'header X-Request-Id may now be absent' } },
  { name: 'an error code removed', change: (d) => (schemas(d).ErrorCode.enum = schemas(d).ErrorCode.enum.filter((c: string) => c !== 'not_found')), expected: { at: 'components', message: 'error code not_found removed' } },
  { name: 'a security scheme removed', change: (d) => dropScheme(d, 'BearerAuth'), expected: { at: 'components', message: 'security scheme BearerAuth removed' } },
  {
    name: 'an operation needing another permission',
    change: (d) => (d.paths['/contracts'].get.security = [{ ApiKeyAuth: ['contracts:export'] }, { BearerAuth: ['contracts:export'] }]),
    expected: { at: 'GET /contracts', message: 'security: a request authorised by ApiKeyAuth [contracts:read] is no longer' },
  },
  {
    name: 'a public operation made to need a key',
    change: (d) => (d.paths['/openapi.json'].get.security = [{ ApiKeyAuth: [] }]),
    expected: { at: 'GET /openapi.json', message: 'security: a request authorised by no credentials is no longer' },
  },
  { name: 'an operationId changed', change: (d) => (d.paths['/contracts'].get.operationId = 'contractsList'), expected: { at: 'GET /contracts', message: 'operationId changed from listContracts to contractsList' } },
  {
    name: 'a component schema renamed',
    change: (d) => {
      schemas(d).ContractPage = schemas(d).ContractList;
      delete schemas(d).ContractList;
      d.paths['/contracts'].get.responses['200'].content['application/json'].schema = { $ref: '#/components/schemas/ContractPage' };
    },
    expected: { at: 'components', message: 'schema ContractList removed or renamed' },
  },
  {
    name: 'a webhook payload field removed',
    change: (d) => delete schemas(d).ContractDeletedEvent.properties.data.properties.contract.properties.organization_id,
    expected: { at: 'webhook contract.deleted payload application/json → data.contract', message: 'field `organization_id` removed' },
  },
  {
    name: 'a webhook header no longer sent',
    change: (d) => (d.webhooks['contract.created'].post.parameters = d.webhooks['contract.created'].post.parameters.filter((p: Json) => p.name !== 'webhook-signature')),
    expected: { at: 'webhook contract.created', message: 'header parameter `webhook-signature` no longer sent' },
  },
];

const ADDITIVE: Case[] = [
  { name: 'a new optional query parameter', change: (d) => d.paths['/contracts'].get.parameters.push({ name: 'tag', in: 'query', schema: { type: 'string' } }) },
  { name: 'a new optional body field', change: (d) => (schemas(d).ExportRequest.properties.delimiter = { type: 'string', enum: [',', ';'] }) },
  {
    name: 'a new response field',
    change: (d) => {
      schemas(d).ContractSummary.properties.tags = { type: 'array', items: { type: 'string' } };
      schemas(d).ContractSummary.required.push('tags');
    },
  },
  { name: 'a new enum value in an answer', change: (d) => schemas(d).ContractSummary.properties.status.enum.push('archived') },
  { name: 'a new error code', change: (d) => schemas(d).ErrorCode.enum.push('gone') },
  { name: 'a new enum value accepted', change: (d) => param(d, '/contracts', 'status').schema.enum.push('archived') },
  { name: 'a maximum raised on a parameter', change: (d) => (param(d, '/contracts', 'limit').schema.maximum = 200) },
  { name: 'a pattern dropped from a parameter', change: (d) => delete param(d, '/contracts', 'cursor').schema.pattern },
  { name: 'a new operation', change: (d) => (d.paths['/contracts/{id}/timeline'] = { get: { ...structuredClone(d.paths['/contracts/{id}'].get), operationId: 'getContractTimeline' } }) },
  { name: 'a new method on a path', change: (d) => (d.paths['/openapi.json'].options = { operationId: 'documentOptions', responses: { '204': { description: 'CORS' } } }) },
  {
    name: 'a new webhook event type',
    change: (d) => (d.webhooks['contract.archived'] = { post: { ...structuredClone(d.webhooks['contract.deleted'].post), operationId: 'contractArchivedWebhook' } }),
  },
  { name: 'a new response status', change: (d) => (d.paths['/contracts/{id}'].get.responses['410'] = structuredClone(d.paths['/contracts/{id}'].get.responses['404'])) },
  { name: 'a new response header', change: (d) => (d.paths['/contracts'].get.responses['200'].headers['X-Total'] = { schema: { type: 'integer' } }) },
  { name: 'a new security alternative', change: (d) => d.paths['/contracts'].get.security.push({ OAuth: ['contracts:read'] }) },
  { name: 'an optional response header made required', change: (d) => (d.components.headers['X-RateLimit-Limit'].required = true) },
  { name: 'a parameter deprecated', change: (d) => (param(d, '/contracts', 'offset').deprecated = true) },
  {
    name: 'descriptions, summaries, examples, code samples, tags and servers changed',
    change: (d) => {
      const walk = (node: unknown): void => {
        if (Array.isArray(node)) return node.forEach(walk);
        if (!node || typeof node !== 'object') return;
        const o = node as Json;
        for (const key of ['description', 'summary']) if (typeof o[key] === 'string') o[key] = `${o[key]} (reworded)`;
        if ('example' in o) o.example = 'changed';
        if (o.examples && typeof o.examples === 'object' && !Array.isArray(o.examples)) o.examples = {};
        delete o['x-codeSamples'];
        Object.values(o).forEach(walk);
      };
      walk(d.paths);
      walk(d.components);
      walk(d.webhooks);
      d.info.description = 'Rewritten.';
      d.tags = [];
      d.servers = [{ url: 'https://elsewhere.example' }];
    },
  },
];

describe('the breaking-change check', () => {
  it('finds nothing between today\'s document and itself, or its contract', () => {
    expect(breakingChanges(today, copy())).toEqual([]);
    expect(breakingChanges(contractOf(today), contractOf(copy()))).toEqual([]);
  });

  it.each(BREAKING.map((c) => [c.name, c] as const))('catches %s', (_name, c) => {
    const base = copy();
    c.base?.(base);
    const head = copy();
    c.change(head);
    const changes = breakingChanges(base, head);
    expect(changes, JSON.stringify(changes, null, 2)).toContainEqual({ at: c.expected!.at, message: expect.stringContaining(c.expected!.message) });
    // Against the contract (the baseline's form) the same is found.
    expect(breakingChanges(contractOf(base), contractOf(head))).toContainEqual({ at: c.expected!.at, message: expect.stringContaining(c.expected!.message) });
  });

  it.each(ADDITIVE.map((c) => [c.name, c] as const))('lets %s through', (_name, c) => {
    const head = copy();
    c.change(head);
    expect(breakingChanges(today, head)).toEqual([]);
  });
});

describe('the committed baseline', () => {
  const committed = JSON.parse(readFileSync(BASELINE_FILE, 'utf8')) as Json;

  it('holds today\'s document: no breaking change, made at today\'s version, and nothing changed without an entry', () => {
    expect(committed.info.version).toBe(changelogVersion());
    expect(checkBaseline({ document: today, baseline: committed, changelog: CHANGELOG, deprecations: DEPRECATIONS }).problems).toEqual([]);
  });

  it('is what --update-baseline writes today', () => {
    expect(updateBaseline({ document: today, baseline: committed, changelog: CHANGELOG, deprecations: DEPRECATIONS }).file).toEqual(committed);
  });
});

describe('the rules between the baseline and the changelog', () => {
  const baseline = updateBaseline({ document: today, baseline: undefined, changelog: CHANGELOG, deprecations: [] }).file!;
  const entry = (kind: ChangelogEntry['kind']): ChangelogEntry => ({ date: '2026-12-01', anchor: `test-${kind}`, kind, title: 'Test', body: 'Test.' });
  /** Today's document with a change, at the version of a changelog with `entries` on top. */
  const changed = (change: (d: Json) => void, entries: ChangelogEntry[] = []) => {
    const document = copy();
    change(document);
    const changelog = [...entries, ...CHANGELOG];
    document.info.version = changelogVersion(changelog);
    return { document, changelog };
  };
  // The versions around today's changelog (every entry but a fix raises the minor, a fix the patch).
  const current = changelogVersion(CHANGELOG);
  const [major, minor, patch] = current.split('.').map(Number) as [number, number, number];
  const nextMinor = `${major}.${minor + 1}.0`;
  const nextPatch = `${major}.${minor}.${patch + 1}`;
  const addParameter = (d: Json) => d.paths['/contracts'].get.parameters.push({ name: 'tag', in: 'query', schema: { type: 'string' } });
  const removeParameter = (d: Json) => (d.paths['/contracts'].get.parameters = d.paths['/contracts'].get.parameters.filter((p: Json) => p.name !== 'q'));

  it('fails an addition without a changelog entry, and passes it with one and the baseline written', () => {
    const without = changed(addParameter);
    expect(checkBaseline({ ...without, baseline, deprecations: [] }).problems).toEqual([expect.stringContaining(`changed since openapi/v1-baseline.json (version ${current}) without a changelog entry`)]);
    expect(updateBaseline({ ...without, baseline, deprecations: [] }).problems).toEqual([expect.stringContaining('the changelog has no new entry')]);

    const withEntry = changed(addParameter, [entry('added')]);
    expect(checkBaseline({ ...withEntry, baseline, deprecations: [] }).problems).toEqual([expect.stringContaining(`was made at version ${current}, and the changelog is at ${nextMinor}`)]);
    const written = updateBaseline({ ...withEntry, baseline, deprecations: [] });
    expect(written.problems).toEqual([]);
    expect(checkBaseline({ ...withEntry, baseline: written.file, deprecations: [] }).problems).toEqual([]);
  });

  it('fails an entry whose baseline was not written, even with no change to the document', () => {
    const fix = changed(() => undefined, [entry('fixed')]);
    expect(fix.document.info.version).toBe(nextPatch);
    expect(checkBaseline({ ...fix, baseline, deprecations: [] }).problems).toEqual([expect.stringContaining(`was made at version ${current}, and the changelog is at ${nextPatch}`)]);
  });

  it('names the breaking change, and writes it into the baseline only with a removed or changed entry', () => {
    const added = changed(removeParameter, [entry('added')]);
    expect(checkBaseline({ ...added, baseline, deprecations: [] }).problems).toContain('GET /contracts: query parameter `q` removed (or renamed): requests that send it are refused');
    expect(updateBaseline({ ...added, baseline, deprecations: [] }).problems[0]).toContain('breaking changes need a new changelog entry of kind `removed`');

    const removed = changed(removeParameter, [entry('removed')]);
    const written = updateBaseline({ ...removed, baseline, deprecations: [] });
    expect(written.problems).toEqual([]);
    expect(written.breaking).toHaveLength(1);
    expect(checkBaseline({ ...removed, baseline: written.file, deprecations: [] }).problems).toEqual([]);
  });

  it('fails when there is no baseline, or a deprecation breaks its policy', () => {
    expect(checkBaseline({ document: today, baseline: undefined, changelog: CHANGELOG, deprecations: [] }).problems).toEqual([expect.stringContaining('is missing')]);
    const early = { kind: 'parameter' as const, operation: 'listContracts', name: 'q', announced: '2026-12-01', sunset: '2027-06-01', changelog: 'test-deprecated' };
    const problems = checkBaseline({ document: today, baseline, changelog: CHANGELOG, deprecations: [early] }).problems;
    expect(problems).toEqual([expect.stringContaining('less than 12 months'), expect.stringContaining('no changelog entry with the anchor "test-deprecated"')]);
  });
});
