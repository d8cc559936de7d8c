import { expect, type APIRequestContext, type APIResponse } from '@playwright/test';
import { OpenAPIBackend, SetMatchType, type Document } from 'openapi-backend';

/**
 * Calls of the REST API over HTTP, each checked against the served OpenAPI document
 * (/api/v1/openapi.json) with openapi-backend: the status must be documented for the
 * operation, the media type must be one the document lists, a JSON body must match the
 * documented schema and every documented header must be present with a valid value.
 * Code and document therefore cannot drift apart unnoticed.
 */

export const API = '/api/v1';

type Json = Record<string, unknown>;

export interface ErrorBody {
  success: false;
  error: { code: string; message: string; details: { param?: string; message: string }[] };
  request_id: string;
}

export interface ApiResponse<T = unknown> {
  status: number;
  headers: Record<string, string>;
  text: string;
  /** The parsed body when the response is JSON. */
  body: T;
}

export interface ContractDocument {
  api: OpenAPIBackend;
  definition: Json;
  /** operationId by "METHOD /path" as the document writes it, e.g. "GET /contracts/{id}". */
  operationIds: Map<string, string>;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/i;

function isCalendarDate(text: string): boolean {
  const m = DATE.exec(text);
  if (!m) return false;
  const d = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])));
  return d.toISOString().slice(0, 10) === text;
}

/** JSON Schema formats of the document (RFC 4122 UUID, RFC 3339 full-date and date-time). */
const FORMATS: Record<string, (value: string) => boolean> = {
  uuid: (v) => UUID.test(v),
  date: isCalendarDate,
  'date-time': (v) => DATE_TIME.test(v) && isCalendarDate(v.slice(0, 10)) && !Number.isNaN(Date.parse(v)),
};

/** Fetches the served document and prepares the validator. */
export async function loadContractDocument(request: APIRequestContext): Promise<ContractDocument> {
  const res = await request.get(`${API}/openapi.json`);
  expect(res.status(), 'GET /api/v1/openapi.json').toBe(200);
  expect(res.headers()['content-type']).toMatch(/^application\/json/);
  const definition = (await res.json()) as Json;
  // The served document is the source of truth: give openapi-backend a copy, so that its
  // dereferencing does not change what the tests read.
  const api = new OpenAPIBackend({
    definition: structuredClone(definition) as unknown as Document,
    strict: false,
    quick: false,
    validate: true,
    // openapi-backend only knows the OAS formats (int32, byte, ...); without these the
    // JSON Schema formats of the document would be ignored.
    customizeAjv: (ajv) => {
      for (const [name, validate] of Object.entries(FORMATS)) ajv.addFormat(name, { type: 'string', validate });
      return ajv;
    },
  });
  // openapi-backend 5 checks a definition against the OpenAPI 3.0 meta-schema only. A 3.1
  // document fails that check, and with strict: false init() then skips dereferencing
  // and silently ends with no operations. The document's own validity is `redocly lint`'s
  // job in CI; here only the version is checked, and any other init warning fails.
  api.validateDefinition = () => {
    expect(String(api.document.openapi), 'OpenAPI version').toMatch(/^3\.1\./);
    return api.document;
  };
  const warnings: unknown[][] = [];
  const warn = console.warn;
  console.warn = (...args: unknown[]) => warnings.push(args);
  try {
    await api.init();
  } finally {
    console.warn = warn;
  }
  expect(warnings.map((w) => w.map(String).join(' ')), 'openapi-backend init warnings').toEqual([]);
  expect(api.getOperations().length, 'operations in the document').toBeGreaterThan(0);
  const operationIds = new Map<string, string>();
  for (const operation of api.getOperations()) {
    operationIds.set(`${operation.method.toUpperCase()} ${operation.path}`, operation.operationId!);
  }
  return { api, definition, operationIds };
}

/** The operationId of "METHOD /path" (path as in the document, below /api/v1). */
export function operationId(doc: ContractDocument, method: string, path: string): string {
  const id = doc.operationIds.get(`${method.toUpperCase()} ${path}`);
  expect(id, `the document has an operation for ${method} ${path}`).toBeDefined();
  return id!;
}

function mediaType(headers: Record<string, string>): string {
  return (headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
}

function formatErrors(errors: unknown): string {
  return JSON.stringify(errors, null, 2);
}

/** Reads a Playwright response into an ApiResponse (JSON parsed when declared as JSON). */
export async function readResponse<T = unknown>(res: APIResponse): Promise<ApiResponse<T>> {
  const headers = res.headers();
  const text = await res.text();
  let body: unknown = undefined;
  if (mediaType(headers) === 'application/json') {
    try {
      body = JSON.parse(text);
    } catch {
      throw new Error(`${res.url()}: Content-Type is JSON but the body is not: ${text.slice(0, 200)}`);
    }
  }
  return { status: res.status(), headers, text, body: body as T };
}

/** Checks what every API response must have, documented operation or not. */
export function expectCommonHeaders(res: ApiResponse, what: string): void {
  const requestId = res.headers['x-request-id'];
  expect(requestId, `${what}: X-Request-Id`).toMatch(/^\S{8,}$/);
  if (res.status >= 400) {
    expect(mediaType(res.headers), `${what}: error responses are JSON`).toBe('application/json');
    const body = res.body as ErrorBody;
    expect(body, `${what}: error envelope`).toMatchObject({ success: false, error: { code: expect.any(String) } });
    expect(body.request_id, `${what}: request_id equals X-Request-Id`).toBe(requestId);
  }
}

/** Validates a response of a documented operation against the served document. */
export function expectDocumented(doc: ContractDocument, opId: string, res: ApiResponse, what = opId): void {
  expectCommonHeaders(res, what);
  const operation = doc.api.getOperation(opId);
  expect(operation, `operation ${opId} in the document`).toBeDefined();
  const declared = (operation!.responses as Record<string, Json | undefined>)[String(res.status)];
  expect(declared, `${what}: status ${res.status} is documented for ${opId} (body: ${res.text.slice(0, 300)})`).toBeDefined();

  const content = (declared!.content ?? {}) as Record<string, Json>;
  const type = mediaType(res.headers);
  expect(Object.keys(content), `${what}: media type ${type} is documented for ${opId} ${res.status}`).toContain(type);
  if (type === 'application/json') {
    const result = doc.api.validateResponse(res.body, opId, res.status);
    expect(result.errors, `${what}: body matches the document\n${formatErrors(result.errors)}\n${res.text.slice(0, 500)}`).toBeNull();
  }

  // Every header the document promises for this status is present, except those it marks
  // `required: false` (Link: only when there is a next page); every one present is valid.
  const documentedHeaders = (declared!.headers ?? {}) as Record<string, { required?: boolean }>;
  const missing = Object.entries(documentedHeaders)
    .filter(([name, header]) => header.required !== false && !(name.toLowerCase() in res.headers))
    .map(([name]) => name);
  expect(missing, `${what}: documented headers missing\n${JSON.stringify(res.headers)}`).toEqual([]);
  const headers = doc.api.validateResponseHeaders(res.headers, opId, { statusCode: res.status, setMatchType: SetMatchType.Any });
  expect(headers.errors, `${what}: headers match the document\n${formatErrors(headers.errors)}\n${JSON.stringify(res.headers)}`).toBeNull();
}

/**
 * Validates an error body of a request that no operation documents (unknown path, wrong
 * method) against the document's error envelope (components.schemas.Error), through an
 * operation's documented 400, whose schema is that envelope.
 */
export function expectDocumentedErrorEnvelope(doc: ContractDocument, res: ApiResponse, what: string): void {
  expectCommonHeaders(res, what);
  const listId = operationId(doc, 'GET', '/contracts');
  const schema = (((doc.definition.paths as Json)['/contracts'] as Json).get as Json).responses as Record<string, Json>;
  expect(JSON.stringify(schema['400']?.content), 'the documented 400 is the Error envelope').toContain('#/components/schemas/Error');
  const result = doc.api.validateResponse(res.body, listId, 400);
  expect(result.errors, `${what}: body matches the Error envelope\n${formatErrors(result.errors)}\n${res.text}`).toBeNull();
}

/** The body without its request_id, to compare error bodies of different requests. */
export function withoutRequestId(body: unknown): unknown {
  const { request_id: _ignored, ...rest } = body as ErrorBody;
  return rest;
}

/**
 * OWASP CSV injection: how the export writes a text cell that a spreadsheet would run (its
 * first non-whitespace character is = + - @, or it starts with a tab or CR).
 */
export function neutralised(text: string): string {
  return /^(?:[\t\r]|\s*[=+\-@])/.test(text) ? `'${text}` : text;
}
