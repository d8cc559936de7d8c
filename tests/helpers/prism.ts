import { getHttpOperationsFromSpec } from '@stoplight/prism-http';
import * as prismRouter from '@stoplight/prism-http/dist/router';
import { validateOutput } from '@stoplight/prism-http/dist/validator';
import type { IHttpOperation } from '@stoplight/types';
import { buildOpenApiDocument } from '@/server/rest/openapi-document';

/**
 * Prism (@stoplight/prism-cli's validator, the code `prism proxy --errors` runs on every
 * answer it forwards) over every answer of the API in the test suite: tests/helpers/
 * prism-setup.ts wraps the router's handleApiRequest for every test file, and an answer
 * that violates the served OpenAPI document fails the test that caused it, as
 * `--errors` turns a violation into an error. Answers are validated after each test, so
 * that the validator's work never shifts the timing a test measures.
 *
 * What the proxy would answer itself is left to the API and its own checks
 * (tests/helpers/openapi-validator.ts): a path or method the document does not have (the
 * API's 404 and 405), and requests Prism would refuse before forwarding them (no key, an
 * invalid parameter), whose answers are still validated here.
 */

type Route = (options: { resources: IHttpOperation[]; input: unknown }) => { _tag: 'Left' | 'Right'; right?: IHttpOperation };
// The module is CommonJS with a default export; what a bundler hands over differs.
const routeOf = (m: unknown): Route => {
  const exported = (m as { default?: unknown }).default ?? m;
  return ((exported as { default?: unknown }).default ?? exported) as Route;
};
const route = routeOf(prismRouter);

const API_PREFIX = '/api/v1';
let operations: Promise<IHttpOperation[]> | undefined;

export interface Violation {
  path: string;
  message: string;
}

/** An answer as it left the API: what Prism validates. */
export interface RecordedAnswer {
  method: string;
  url: string;
  status: number;
  headers: Record<string, string>;
  /** The JSON body, read from a copy (undefined for other bodies and for none). */
  json?: Promise<string>;
}

/**
 * Records an answer without delaying it: its JSON body is copied now and read later.
 * CSV and calendars are streams that a test may read slowly or abort (reading a copy would
 * pull them whole), and their schema is `type: string`, which any text meets: their
 * status, headers and media type are validated, and the body stands in as text.
 */
export function recordAnswer(req: Request, res: Response): RecordedAnswer {
  const headers = Object.fromEntries(res.headers.entries());
  const json = req.method !== 'HEAD' && headers['content-type']?.startsWith('application/json') ? res.clone().text() : undefined;
  json?.catch(() => undefined);
  return { method: req.method, url: req.url, status: res.status, headers, ...(json ? { json } : {}) };
}

/** The violations of one answer (none when Prism cannot match the request to an operation). */
export async function prismViolations(answer: RecordedAnswer): Promise<Violation[]> {
  operations ??= getHttpOperationsFromSpec(JSON.parse(JSON.stringify(buildOpenApiDocument('http://localhost:3000'))));
  const url = new URL(answer.url);
  if (!url.pathname.startsWith(API_PREFIX)) return [];
  const query: Record<string, string[]> = {};
  for (const [name, value] of url.searchParams) (query[name] ??= []).push(value);
  const matched = route({
    resources: await operations,
    // The API serves a path with a trailing slash as the path without it (server/rest/router.ts);
    // Prism would read "/contracts/" as get-one with an empty id.
    input: { method: answer.method.toLowerCase(), url: { path: url.pathname.slice(API_PREFIX.length).replace(/(.)\/$/, '$1') || '/', query }, headers: {} },
  });
  if (matched._tag !== 'Right' || !matched.right) return [];
  const type = answer.headers['content-type'];
  const body = answer.json ? JSON.parse(await answer.json) : answer.method === 'HEAD' || answer.status === 304 || !type ? undefined : '';
  const result = validateOutput({ resource: matched.right, element: { statusCode: answer.status, headers: answer.headers, ...(body !== undefined ? { body } : {}) } } as never) as {
    _tag: 'Left' | 'Right';
    left?: { path: (string | number)[]; message: string; severity: number }[];
  };
  // Severity 0 is an error: what `--errors` answers with a 500.
  return result._tag === 'Left' ? (result.left ?? []).filter((d) => d.severity === 0).map((d) => ({ path: d.path.join('.'), message: d.message })) : [];
}
