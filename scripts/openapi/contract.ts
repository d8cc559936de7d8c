/**
 * The contract of an OpenAPI document: the document without its prose (descriptions,
 * summaries, examples, code samples, tags, servers), which is what clients depend on and
 * what the committed baseline (openapi/v1-baseline.json) holds. `info` keeps its title and
 * version only: the version is the changelog's (server/rest/changelog.ts), and the check
 * (./baseline.ts) reads it to tell whether a change came with an entry.
 */

export type Json = Record<string, unknown>;

/** Keywords whose value is prose or presentation, never part of what a client can rely on. */
const PROSE = new Set(['description', 'summary', 'example', 'examples', 'x-codeSamples', 'externalDocs', 'tags', 'servers', '$comment']);

/**
 * Keywords whose value is a map of names (fields, paths, statuses, media types…): its keys
 * are names, not keywords, so a field called "description" is kept.
 */
const NAMED = new Set([
  'properties',
  'patternProperties',
  'dependentSchemas',
  '$defs',
  'definitions',
  'paths',
  'webhooks',
  'responses',
  'headers',
  'content',
  'encoding',
  'schemas',
  'securitySchemes',
  'parameters',
  'requestBodies',
  'links',
  'callbacks',
]);

function strip(node: unknown, named = false): unknown {
  if (Array.isArray(node)) return node.map((item) => strip(item));
  if (!node || typeof node !== 'object') return node;
  const out: Json = {};
  for (const [key, value] of Object.entries(node)) {
    if (!named && PROSE.has(key)) continue;
    out[key] = strip(value, !named && NAMED.has(key));
  }
  return out;
}

/** The contract of `doc`, in the document's own order (what the baseline file holds). */
export function contractOf(doc: Json): Json {
  const { info, ...rest } = doc;
  const { title, version } = (info ?? {}) as Json;
  return { info: { title, version }, ...(strip(rest) as Json) };
}

/** The version a document or contract declares. */
export const versionOf = (doc: Json): string => String((doc.info as Json | undefined)?.version ?? '');

/**
 * A canonical text of a contract without its version, for equality: object keys sorted,
 * and the lists whose order means nothing (required, enum, type, parameters) sorted too,
 * so that reordering them is not taken for a change.
 */
export function canonical(contract: Json): string {
  const { info: _info, 'x-baseline': _note, ...rest } = contract;
  const walk = (node: unknown, key?: string): unknown => {
    if (Array.isArray(node)) {
      const items = node.map((item) => walk(item));
      if (key === 'required' || key === 'enum' || key === 'type') return [...items].sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
      if (key === 'parameters') return [...items].sort((a, b) => parameterKey(a).localeCompare(parameterKey(b)));
      return items;
    }
    if (!node || typeof node !== 'object') return node;
    return Object.fromEntries(
      Object.keys(node)
        .sort()
        .map((k) => [k, walk((node as Json)[k], k)]),
    );
  };
  return JSON.stringify(walk(rest));
}

const parameterKey = (p: unknown) => `${String((p as Json).in)}:${String((p as Json).name)}`;
