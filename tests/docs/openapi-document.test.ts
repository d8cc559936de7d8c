import OpenAPIBackend, { type Document } from 'openapi-backend';
import Papa from 'papaparse';
import { describe, expect, it } from 'vitest';
import { EXPORT_COLUMNS } from '@/server/contracts/shape';
import { buildOpenApiDocument } from '@/server/rest/openapi-document';

/**
 * The document as a client generator and a reader see it (issue 16): operation names,
 * named envelopes, truthful bounds, and examples that match the schemas they illustrate.
 */

type Json = Record<string, unknown>;

/** The JSON Schema formats of the document, which openapi-backend's ajv does not know. */
const FORMATS: Record<string, RegExp> = {
  uuid: /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i,
  date: /^\d{4}-\d{2}-\d{2}$/,
  'date-time': /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/,
};

const doc = buildOpenApiDocument('https://api.example.test');
const paths = doc.paths as Record<string, Record<string, Json>>;
const schemas = (doc.components as Json).schemas as Record<string, Json>;

function operations(): { key: string; operation: Json }[] {
  return Object.entries(paths).flatMap(([path, item]) => Object.entries(item).map(([method, operation]) => ({ key: `${method} ${path}`, operation })));
}

describe('the OpenAPI document', () => {
  it('names operations the way generated clients name methods', () => {
    expect(Object.fromEntries(operations().map(({ key, operation }) => [key, operation.operationId]))).toEqual({
      'get /contracts': 'listContracts',
      'head /contracts': 'listContractsHead',
      'get /contracts/{id}': 'getContract',
      'head /contracts/{id}': 'getContractHead',
      'get /events': 'listEvents',
      'head /events': 'listEventsHead',
      'get /events/{id}': 'getEvent',
      'head /events/{id}': 'getEventHead',
      'post /contracts/export': 'exportContracts',
      'get /calendar/{token}.ics': 'getCalendarFeed',
      'head /calendar/{token}.ics': 'getCalendarFeedHead',
      'get /openapi.json': 'getOpenApiDocument',
      'head /openapi.json': 'getOpenApiDocumentHead',
    });
  });

  it('references named envelopes from every JSON response', () => {
    expect(Object.keys(schemas)).toEqual(expect.arrayContaining(['ContractList', 'ContractResponse', 'EventList', 'EventResponse', 'Error', 'ErrorCode']));
    const ENVELOPES: Record<string, string> = { 'get /contracts': 'ContractList', 'get /contracts/{id}': 'ContractResponse', 'get /events': 'EventList', 'get /events/{id}': 'EventResponse' };
    for (const { key, operation } of operations()) {
      for (const [status, response] of Object.entries(operation.responses as Record<string, Json>)) {
        const json = (response.content as Record<string, Json> | undefined)?.['application/json'];
        // The document's own 200 is an OpenAPI document, not one of the API's bodies.
        if (!json || (key === 'get /openapi.json' && status === '200')) continue;
        const expected = status !== '200' ? 'Error' : (ENVELOPES[key] ?? 'ContractResponse');
        expect(json.schema, `${key} ${status}`).toEqual({ $ref: `#/components/schemas/${expected}` });
      }
    }
  });

  it('bounds counts and sizes truthfully and lists the error codes as a named enum', () => {
    const pagination = schemas.Pagination!.properties as Record<string, Json>;
    expect(pagination.limit).toMatchObject({ minimum: 1, maximum: 100 });
    for (const field of ['offset', 'total']) expect(pagination[field]!.minimum, field).toBe(0);
    expect((schemas.ContractSummary!.properties as Record<string, Json>).file_size!.minimum).toBe(0);
    const error = (schemas.Error!.properties as Record<string, Json>).error!.properties as Record<string, Json>;
    expect(error.code).toEqual({ $ref: '#/components/schemas/ErrorCode' });
    expect(schemas.ErrorCode!.enum).toEqual([
      'invalid_request', 'unauthorized', 'forbidden', 'insufficient_scope', 'ip_not_allowed', 'not_found', 'method_not_allowed', 'request_timeout', 'cursor_expired', 'rate_limited', 'internal_error', 'service_unavailable',
    ]);
    const autoRenewal = ((paths['/contracts']!.get!.parameters as Json[]).find((p) => p.name === 'auto_renewal')!.schema as Json);
    expect(autoRenewal).toMatchObject({ type: 'string', enum: ['true', 'false'] });
  });

  it('documents every answer with the headers it carries', () => {
    const header = (response: Json, name: string) => (response.headers as Record<string, Json> | undefined)?.[name];
    for (const { key, operation } of operations()) {
      const responses = operation.responses as Record<string, Json>;
      const statuses = Object.keys(responses);
      expect(statuses, key).toContain('405');
      expect(statuses, key).toContain('400');
      // Conditional requests wherever GET (and so HEAD) is served.
      if (!key.startsWith('post ')) expect(statuses, key).toContain('304');
      for (const [status, response] of Object.entries(responses)) {
        expect(header(response, 'X-Request-Id'), `${key} ${status}: X-Request-Id`).toBeDefined();
        if (status === '401') expect(header(response, 'WWW-Authenticate'), `${key} 401`).toBeDefined();
        if (status === '405') expect(header(response, 'Allow'), `${key} 405`).toBeDefined();
        if (status === '429' || status === '503') expect(header(response, 'Retry-After'), `${key} ${status}`).toBeDefined();
        if (status === '429') expect(header(response, 'X-RateLimit-Remaining'), `${key} 429`).toBeDefined();
        if ((status === '200' || status === '304') && !key.startsWith('post ')) expect(header(response, 'ETag'), `${key} ${status}: ETag`).toBeDefined();
        if (status === '304' || key.startsWith('head ')) expect(response.content, `${key} ${status} has no body`).toBeUndefined();
      }
      const usesKey = key.includes('/contracts') || key.includes('/events');
      // The permission the key needs, in the security requirement (docs/keys.md), and the 403 it gets without it.
      const permission = key.includes('/export') ? 'contracts:export' : 'contracts:read';
      expect(operation.security, key).toEqual(usesKey ? [{ ApiKeyAuth: [permission] }, { BearerAuth: [permission] }] : []);
      if (usesKey) {
        expect(statuses, key).toContain('401');
        expect(statuses, key).toContain('403');
        expect(header(responses['403']!, 'WWW-Authenticate'), `${key} 403`).toBeDefined();
        if (!key.startsWith('head ')) {
          const examples = Object.keys(((responses['403']!.content as Record<string, Json>)['application/json']!.examples as Json));
          expect(examples, key).toEqual(expect.arrayContaining(['insufficientScope', 'ipNotAllowed']));
        }
      }
    }
    const feed = paths['/calendar/{token}.ics']!.get!.responses as Record<string, Json>;
    for (const status of ['200', '304']) expect(header(feed[status]!, 'Last-Modified'), `feed ${status}`).toBeDefined();
    expect((doc.components as Json).securitySchemes).toMatchObject({ BearerAuth: { type: 'http', scheme: 'bearer' } });
  });

  it('documents the content types the export reads and the CSV it writes', () => {
    const exportOp = paths['/contracts/export']!.post!;
    expect(Object.keys((exportOp.requestBody as Json).content as Json)).toEqual(['application/json', 'text/plain', 'application/x-www-form-urlencoded']);
    expect((schemas.ExportRequest!.properties as Record<string, Json>).date_format).toMatchObject({ enum: ['iso', 'excel'] });
    const csv = (((exportOp.responses as Record<string, Json>)['200']!.content as Record<string, Json>)['text/csv']!.example as string);
    expect(csv.split('\r\n')[0]).toBe(EXPORT_COLUMNS.join(','));
    const parsed = Papa.parse<Record<string, string>>(csv, { header: true, skipEmptyLines: true });
    expect(parsed.errors).toEqual([]);
    expect(parsed.data).toHaveLength(2);
    expect(csv.endsWith('\r\n')).toBe(true);
  });

  it('has an example for every response body, and every example matches its schema', async () => {
    const api = new OpenAPIBackend({
      definition: structuredClone(doc) as unknown as Document,
      quick: true,
      validate: true,
      customizeAjv: (ajv) => {
        for (const [name, pattern] of Object.entries(FORMATS)) ajv.addFormat(name, pattern);
        return ajv;
      },
    });
    await api.init();
    let checked = 0;
    for (const { key, operation } of operations()) {
      for (const [status, response] of Object.entries(operation.responses as Record<string, Json>)) {
        for (const [type, media] of Object.entries((response.content as Record<string, Json> | undefined) ?? {})) {
          const examples = media.examples ? Object.values(media.examples as Record<string, { value: unknown }>).map((e) => e.value) : media.example !== undefined ? [media.example] : [];
          expect(examples.length, `${key} ${status} ${type} has an example`).toBeGreaterThan(0);
          if (type !== 'application/json') continue;
          for (const value of examples) {
            const result = api.validateResponse(value, String(operation.operationId), Number(status));
            expect(result.errors ?? [], `${key} ${status}: ${JSON.stringify(value)}`).toEqual([]);
            checked++;
          }
        }
      }
    }
    expect(checked).toBeGreaterThan(20);
  });
});
