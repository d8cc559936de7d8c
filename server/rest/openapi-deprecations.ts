import { changelogUrl } from './changelog';
import type { Deprecation } from './deprecations';

/**
 * The deprecations of ./deprecations.ts in the OpenAPI document, and which operations they
 * concern (the router's and the export's headers read the same answer):
 *
 * - a parameter: `deprecated: true` on the query parameter, or on the property of the
 *   operation's JSON request body schema (the export's ExportRequest);
 * - a field: `deprecated: true` on the property of the named component schema; it concerns
 *   every operation whose answers reference that schema, directly or through others.
 *
 * Every answer of a concerned operation declares `Deprecation`, `Sunset` and `Link`
 * (optional: a parameter's answers carry them only when the request sent it), so that the
 * answers stay valid against the document (Prism checks every answer in the tests).
 * A deprecation that names nothing in the document is an error when the document is built:
 * a typo must not deprecate nothing silently.
 */

type Json = Record<string, unknown>;

/** The deprecations one operation's answers may carry, by where the client uses them. */
export interface OperationDeprecations {
  /** Query parameters: on answers to requests that sent them. */
  query: Deprecation[];
  /** Fields of the JSON request body: on answers to requests whose body had them. */
  body: Deprecation[];
  /** Fields the answers contain: on every answer. */
  always: Deprecation[];
}

const SCHEMA_REF = '#/components/schemas/';

interface Operation {
  id: string;
  operation: Json;
}

/** The document's operations, HEAD left out (it is served as its GET, with the GET's deprecations). */
function operationsOf(doc: Json): Operation[] {
  return Object.values(doc.paths as Record<string, Record<string, Json>>).flatMap((item) =>
    Object.entries(item)
      .filter(([method]) => method !== 'head')
      .map(([, operation]) => ({ id: String(operation.operationId), operation })),
  );
}

const schemasOf = (doc: Json) => ((doc.components as Json).schemas ?? {}) as Record<string, Json>;

/** Names of the component schemas `node` references, directly or through other schemas. */
function referencedSchemas(node: unknown, schemas: Record<string, Json>, found = new Set<string>()): Set<string> {
  if (Array.isArray(node)) for (const item of node) referencedSchemas(item, schemas, found);
  else if (node && typeof node === 'object') {
    for (const [key, value] of Object.entries(node)) {
      if (key === '$ref' && typeof value === 'string' && value.startsWith(SCHEMA_REF)) {
        const name = value.slice(SCHEMA_REF.length);
        if (!found.has(name)) {
          found.add(name);
          referencedSchemas(schemas[name], schemas, found);
        }
      } else referencedSchemas(value, schemas, found);
    }
  }
  return found;
}

/** The properties of an operation's JSON request body schema (resolved through its $ref). */
function bodyProperties(doc: Json, operation: Json): Record<string, Json> | undefined {
  const content = ((operation.requestBody as Json | undefined)?.content ?? {}) as Record<string, Json>;
  let schema = content['application/json']?.schema as Json | undefined;
  const ref = schema?.$ref;
  if (typeof ref === 'string' && ref.startsWith(SCHEMA_REF)) schema = schemasOf(doc)[ref.slice(SCHEMA_REF.length)];
  return schema?.properties as Record<string, Json> | undefined;
}

type Place =
  | { where: 'query'; operation: Operation; index: number }
  | { where: 'body'; operation: Operation; properties: Record<string, Json> }
  | { where: 'field'; operations: Operation[]; properties: Record<string, Json> };

function placeOf(doc: Json, d: Deprecation): Place {
  const operations = operationsOf(doc);
  if (d.kind === 'parameter') {
    const operation = operations.find((o) => o.id === d.operation);
    if (!operation) throw new Error(`deprecation: no operation "${d.operation}" in the OpenAPI document`);
    const index = ((operation.operation.parameters ?? []) as Json[]).findIndex((p) => p.name === d.name && p.in === 'query');
    if (index >= 0) return { where: 'query', operation, index };
    const properties = bodyProperties(doc, operation.operation);
    if (properties && d.name in properties) return { where: 'body', operation, properties };
    throw new Error(`deprecation: ${d.operation} has no query parameter or body field "${d.name}"`);
  }
  const properties = schemasOf(doc)[d.schema]?.properties as Record<string, Json> | undefined;
  if (!properties || !(d.name in properties)) throw new Error(`deprecation: no property "${d.name}" in the schema "${d.schema}"`);
  const schemas = schemasOf(doc);
  return { where: 'field', operations: operations.filter((o) => referencedSchemas(o.operation.responses, schemas).has(d.schema)), properties };
}

/** Which deprecations each operation (by operationId) may carry in its answers. */
export function deprecationsByOperation(doc: Json, deprecations: readonly Deprecation[]): Map<string, OperationDeprecations> {
  const byOperation = new Map<string, OperationDeprecations>();
  const of = (id: string) => {
    if (!byOperation.has(id)) byOperation.set(id, { query: [], body: [], always: [] });
    return byOperation.get(id)!;
  };
  for (const d of deprecations) {
    const place = placeOf(doc, d);
    if (place.where === 'field') for (const operation of place.operations) of(operation.id).always.push(d);
    else of(place.operation.id)[place.where].push(d);
  }
  return byOperation;
}

const note = (d: Deprecation, origin: string, subject?: string) =>
  `**Deprecated**${subject ? `: ${subject},` : ''} since ${d.announced}; it may be gone after ${d.sunset}.${d.replacement ? ` ${d.replacement}` : ''} ([changelog](${changelogUrl(origin, d.changelog)}))`;
const withNote = (description: unknown, text: string) => (description ? `${String(description)} ${text}` : text);

const DEPRECATION_HEADERS: Json = {
  Deprecation: {
    required: false,
    description:
      'RFC 9745: the request used something deprecated (a parameter it sent, or a field this operation answers with: see the description). A structured-field date: `@` and the Unix time of the announcement.',
    schema: { type: 'string', pattern: '^@-?[0-9]+$' },
    example: '@1798761600',
  },
  Sunset: {
    required: false,
    description: 'RFC 8594: the HTTP date after which the deprecated thing may be gone (at least 12 months after the announcement). The earliest, when the request used several.',
    schema: { type: 'string' },
    example: 'Sat, 01 Jan 2028 00:00:00 GMT',
  },
};
const LINK_NOTE =
  ' With `Deprecation`: `<https://…/docs/changelog#…>; rel="deprecation"` (RFC 9745), the changelog entry that announced it, one per deprecated thing the request used (after a `rel="next"`, separated by a comma).';

const headerRef = (name: string) => ({ $ref: `#/components/headers/${name}` });

/** Marks the deprecations in the document (before HEAD operations are copied from their GET). */
export function markDeprecations(doc: Json, deprecations: readonly Deprecation[], origin: string): void {
  if (deprecations.length === 0) return;
  const concerned = new Set<Json>();
  for (const d of deprecations) {
    const place = placeOf(doc, d);
    if (place.where === 'query') {
      const parameters = [...(place.operation.operation.parameters as Json[])];
      const parameter = parameters[place.index]!;
      parameters[place.index] = { ...parameter, deprecated: true, description: withNote(parameter.description, note(d, origin)) };
      place.operation.operation.parameters = parameters;
    } else {
      // Copied, not changed in place: schema objects may be shared between documents.
      const property = place.properties[d.name]!;
      place.properties[d.name] = { ...property, deprecated: true, description: withNote(property.description, note(d, origin)) };
    }
    const operations = place.where === 'field' ? place.operations : [place.operation];
    for (const { operation } of operations) {
      const what = d.kind === 'parameter' ? `the ${place.where === 'body' ? 'body field' : 'parameter'} \`${d.name}\`` : `the field \`${d.name}\` of ${d.schema}`;
      operation.description = withNote(operation.description, note(d, origin, what));
      concerned.add(operation);
    }
  }
  for (const operation of concerned) {
    for (const response of Object.values(operation.responses as Record<string, Json>)) {
      const headers = (response.headers ?? {}) as Json;
      response.headers = { ...headers, Deprecation: headerRef('Deprecation'), Sunset: headerRef('Sunset'), ...(headers.Link ? {} : { Link: headerRef('Link') }) };
    }
  }
  // A new object: the components' headers are a constant shared by every build.
  const components = doc.components as Json;
  const headers = components.headers as Record<string, Json>;
  components.headers = { ...headers, ...DEPRECATION_HEADERS, Link: { ...headers.Link, description: `${String(headers.Link?.description ?? '')}${LINK_NOTE}` } };
}
