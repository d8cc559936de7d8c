/**
 * Code samples of the OpenAPI document (`x-codeSamples`, shown by the API reference):
 * curl, JavaScript (fetch), the typed client (clients/typescript) and Python
 * (`requests`). Each operation's request is described once (SAMPLE_REQUESTS) and
 * rendered in every language, so the four samples of an operation send the same
 * request. tests/docs/code-samples.test.ts checks each description against the
 * document and type-checks the typed-client samples; e2e/code-samples.spec.ts runs
 * every sample against a running server.
 */

type Json = Record<string, unknown>;
type QueryValue = string | number;

export interface SampleRequest {
  method: 'get' | 'post';
  /** The path as the document writes it, below /api/v1. */
  path: string;
  /**
   * Path parameters: a literal example value, or the environment variable that holds a
   * secret (a calendar feed token is a credential, like an API key).
   */
  pathParams?: Record<string, { example: string } | { env: string }>;
  query?: Record<string, QueryValue>;
  body?: Json;
  /**
   * The client's name for the body type. The typed-client sample declares the body with it:
   * written inline, TypeScript widens its enum strings and openapi-fetch then loses the
   * `parseAs` type of the response.
   */
  bodyType?: string;
  /** Sends the API key from CDAPI_KEY (false for the calendar feed). */
  apiKey: boolean;
  /** JSON is printed; anything else is saved to this file. */
  saveAs?: string;
}

/** The environment variable every sample reads the API key from. */
export const API_KEY_ENV = 'CDAPI_KEY';
/** The package name the typed-client samples import (clients/typescript/package.json). */
export const CLIENT_PACKAGE = '@contract-data-api/client';
/** The contract id in the get-one samples. */
export const EXAMPLE_CONTRACT_ID = '3f2b6c1e-8a4d-4c2e-9b7a-0d1e2f3a4b5c';
/** The event id in the get-one-event samples (a webhook's webhook-id). */
export const EXAMPLE_EVENT_ID = 'msg_2f0c5b3e8a1d4c6e9b7a0d1e2f3a4b5c';

/** The request each operation's samples make, by "METHOD path". */
export const SAMPLE_REQUESTS: Record<string, SampleRequest> = {
  'get /contracts': {
    method: 'get',
    path: '/contracts',
    query: { status: 'completed', renewing_within_days: 90, sort: 'renewal_date', limit: 20 },
    apiKey: true,
  },
  'get /contracts/{id}': {
    method: 'get',
    path: '/contracts/{id}',
    pathParams: { id: { example: EXAMPLE_CONTRACT_ID } },
    apiKey: true,
  },
  'get /events': {
    method: 'get',
    path: '/events',
    query: { types: 'contract.updated,contract.deleted', limit: 100 },
    apiKey: true,
  },
  'get /events/{id}': {
    method: 'get',
    path: '/events/{id}',
    pathParams: { id: { example: EXAMPLE_EVENT_ID } },
    apiKey: true,
  },
  'post /contracts/export': {
    method: 'post',
    path: '/contracts/export',
    body: { status: 'completed', sort: 'renewal_date', bom: true },
    bodyType: 'ExportRequest',
    apiKey: true,
    saveAs: 'contracts.csv',
  },
  'get /openapi.json': {
    method: 'get',
    path: '/openapi.json',
    apiKey: false,
    saveAs: 'openapi.json',
  },
  'get /calendar/{token}.ics': {
    method: 'get',
    path: '/calendar/{token}.ics',
    pathParams: { token: { env: 'CALENDAR_FEED_TOKEN' } },
    apiKey: false,
    saveAs: 'contracts.ics',
  },
};

export interface CodeSample {
  lang: 'shell' | 'javascript' | 'typescript' | 'python';
  label: string;
  source: string;
}

// Rendering helpers ------------------------------------------------------------------------

const queryString = (query: Record<string, QueryValue> | undefined) =>
  query && Object.keys(query).length ? `?${new URLSearchParams(Object.entries(query).map(([k, v]) => [k, String(v)]))}` : '';

/** The path with each parameter replaced by `render(name, parameter)`. */
function fillPath(req: SampleRequest, render: (name: string, param: { example: string } | { env: string }) => string): string {
  return req.path.replace(/\{(\w+)\}/g, (_m, name: string) => {
    const param = req.pathParams?.[name];
    if (!param) throw new Error(`code sample for ${req.path}: no value for {${name}}`);
    return render(name, param);
  });
}

const jsIdentifier = /^[A-Za-z_$][\w$]*$/;

/** A JavaScript/TypeScript literal (single quotes, unquoted keys where possible). */
function jsLiteral(value: unknown): string {
  if (value === null || typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (typeof value === 'string') return `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
  if (Array.isArray(value)) return `[${value.map(jsLiteral).join(', ')}]`;
  const entries = Object.entries(value as Json).map(([k, v]) => `${jsIdentifier.test(k) ? k : jsLiteral(k)}: ${jsLiteral(v)}`);
  return `{ ${entries.join(', ')} }`;
}

/** A Python literal (True/False/None). */
function pyLiteral(value: unknown): string {
  if (value === null) return 'None';
  if (typeof value === 'boolean') return value ? 'True' : 'False';
  if (typeof value === 'number') return String(value);
  if (typeof value === 'string') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(pyLiteral).join(', ')}]`;
  return `{${Object.entries(value as Json)
    .map(([k, v]) => `${JSON.stringify(k)}: ${pyLiteral(v)}`)
    .join(', ')}}`;
}

// Languages --------------------------------------------------------------------------------

function curl(req: SampleRequest, serverUrl: string): string {
  const url = `${serverUrl}${fillPath(req, (_n, p) => ('env' in p ? `\${${p.env}}` : encodeURIComponent(p.example)))}${queryString(req.query)}`;
  const lines = [`curl --fail-with-body "${url}"`];
  if (req.apiKey) lines.push(`-H "X-API-Key: $${API_KEY_ENV}"`);
  if (req.body) lines.push('-H "Content-Type: application/json"', `-d '${JSON.stringify(req.body)}'`);
  if (req.saveAs) lines.push(`-o ${req.saveAs}`);
  return lines.join(' \\\n  ');
}

function jsFetch(req: SampleRequest, serverUrl: string): string {
  const pathExpr = fillPath(req, (_n, p) => ('env' in p ? `\${process.env.${p.env}}` : encodeURIComponent(p.example)));
  const url = `${serverUrl}${pathExpr}${queryString(req.query)}`;
  const urlLiteral = url.includes('${') ? `\`${url}\`` : jsLiteral(url);
  const headers: string[] = [];
  if (req.apiKey) headers.push(`'X-API-Key': process.env.${API_KEY_ENV}`);
  if (req.body) headers.push(`'Content-Type': 'application/json'`);
  const init: string[] = [];
  if (req.method !== 'get') init.push(`method: '${req.method.toUpperCase()}'`);
  if (headers.length) init.push(`headers: { ${headers.join(', ')} }`);
  if (req.body) init.push(`body: JSON.stringify(${jsLiteral(req.body)})`);
  const call = init.length ? `await fetch(${urlLiteral}, {\n${init.map((l) => `  ${l},`).join('\n')}\n})` : `await fetch(${urlLiteral})`;
  const lines: string[] = [];
  if (req.saveAs) {
    lines.push(
      "import { createWriteStream } from 'node:fs';",
      "import { Readable } from 'node:stream';",
      "import { pipeline } from 'node:stream/promises';",
      '',
    );
  }
  lines.push(`const response = ${call};`);
  if (req.saveAs) {
    lines.push(
      'if (!response.ok) {',
      '  const { error } = await response.json();',
      '  throw new Error(`${response.status} ${error.code}: ${error.message}`);',
      '}',
      `await pipeline(Readable.fromWeb(response.body), createWriteStream('${req.saveAs}'));`,
      `console.log('Saved ${req.saveAs}');`,
    );
  } else {
    lines.push(
      'const body = await response.json();',
      'if (!response.ok) throw new Error(`${response.status} ${body.error.code}: ${body.error.message}`);',
      'console.log(JSON.stringify(body, null, 2));',
    );
  }
  return lines.join('\n');
}

function typedClient(req: SampleRequest, serverUrl: string): string {
  const params: string[] = [];
  if (req.pathParams) {
    const entries = Object.entries(req.pathParams).map(
      ([name, p]) => `${name}: ${'env' in p ? `process.env.${p.env}!` : jsLiteral(p.example)}`,
    );
    params.push(`path: { ${entries.join(', ')} }`);
  }
  if (req.query) params.push(`query: ${jsLiteral(req.query)}`);
  const init: string[] = [];
  if (params.length) init.push(`params: { ${params.join(', ')} }`);
  if (req.body) init.push(req.bodyType ? 'body' : `body: ${jsLiteral(req.body)}`);
  // Bytes, not text: decoding as text would drop the CSV's byte order mark.
  if (req.saveAs) init.push("parseAs: 'arrayBuffer'");
  const call = `await client.${req.method.toUpperCase()}('${req.path}'${init.length ? `, {\n${init.map((l) => `  ${l},`).join('\n')}\n}` : ''})`;
  const options = [`baseUrl: '${serverUrl}'`];
  if (req.apiKey) options.push(`apiKey: process.env.${API_KEY_ENV}!`);
  const lines: string[] = [];
  if (req.saveAs) {
    lines.push("import { writeFile } from 'node:fs/promises';");
  }
  const imports = ['createContractDataClient', ...(req.bodyType ? [`type ${req.bodyType}`] : [])];
  lines.push(
    `import { ${imports.join(', ')} } from '${CLIENT_PACKAGE}';`,
    '',
    `const client = createContractDataClient({ ${options.join(', ')} });`,
    ...(req.body && req.bodyType ? [`const body: ${req.bodyType} = ${jsLiteral(req.body)};`] : []),
    `const { data, error, response } = ${call};`,
    'if (error) throw new Error(`${response.status} ${error.error.code}: ${error.error.message}`);',
  );
  if (req.saveAs) {
    lines.push(
      `await writeFile('${req.saveAs}', new Uint8Array(data));`,
      `console.log('Saved ${req.saveAs}');`,
    );
  } else {
    lines.push('console.log(JSON.stringify(data, null, 2));');
  }
  return lines.join('\n');
}

function pythonRequests(req: SampleRequest, serverUrl: string): string {
  const usesEnv = req.apiKey || Object.values(req.pathParams ?? {}).some((p) => 'env' in p);
  const path = fillPath(req, (_n, p) => ('env' in p ? `{os.environ['${p.env}']}` : encodeURIComponent(p.example)));
  const url = path.includes('{os.environ') ? `f"${serverUrl}${path}"` : JSON.stringify(`${serverUrl}${path}`);
  const args = [url];
  if (req.query) args.push(`params=${pyLiteral(req.query)}`);
  if (req.body) args.push(`json=${pyLiteral(req.body)}`);
  if (req.apiKey) args.push(`headers={"X-API-Key": os.environ["${API_KEY_ENV}"]}`);
  if (req.saveAs) args.push('stream=True');
  args.push(`timeout=${req.saveAs ? 120 : 30}`);
  const call = `requests.${req.method}(\n${args.map((a) => `    ${a},`).join('\n')}\n)`;
  const standard = [...(req.saveAs ? [] : ['import json']), ...(usesEnv ? ['import os'] : [])];
  const imports = [...standard, ...(standard.length ? [''] : []), 'import requests', ''];
  const failure = (indent: string) => [
    `${indent}if not response.ok:`,
    `${indent}    error = response.json()["error"]`,
    `${indent}    raise SystemExit(f"{response.status_code} {error['code']}: {error['message']}")`,
  ];
  if (req.saveAs) {
    return [
      ...imports,
      `with ${call} as response:`,
      ...failure('    '),
      `    with open("${req.saveAs}", "wb") as file:`,
      '        for chunk in response.iter_content(chunk_size=65536):',
      '            file.write(chunk)',
      `print("Saved ${req.saveAs}")`,
    ].join('\n');
  }
  return [...imports, `response = ${call}`, ...failure(''), 'print(json.dumps(response.json(), indent=2))'].join('\n');
}

/** The four samples of one request, against `serverUrl` (the document's server, ending in /api/v1). */
export function codeSamplesFor(req: SampleRequest, serverUrl: string): CodeSample[] {
  return [
    { lang: 'shell', label: 'curl', source: curl(req, serverUrl) },
    { lang: 'javascript', label: 'JavaScript (fetch)', source: jsFetch(req, serverUrl) },
    { lang: 'typescript', label: 'TypeScript (typed client)', source: typedClient(req, serverUrl) },
    { lang: 'python', label: 'Python (requests)', source: pythonRequests(req, serverUrl) },
  ];
}

/** Adds `x-codeSamples` to every operation of the document that has a sample request (HEAD mirrors its GET and has none). */
export function addCodeSamples(doc: Json, serverUrl: string): void {
  for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, Json>>)) {
    for (const [method, operation] of Object.entries(item)) {
      const req = SAMPLE_REQUESTS[`${method} ${path}`];
      if (req) operation['x-codeSamples'] = codeSamplesFor(req, serverUrl);
    }
  }
}
