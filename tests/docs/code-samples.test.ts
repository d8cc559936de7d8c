import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import OpenAPIBackend, { type Document } from 'openapi-backend';
import ts from 'typescript';
import { afterAll, describe, expect, it } from 'vitest';
import { CLIENT_PACKAGE, SAMPLE_REQUESTS, type CodeSample } from '@/server/rest/code-samples';
import { buildOpenApiDocument } from '@/server/rest/openapi-document';

/**
 * The code samples of the document (x-codeSamples) checked without a server: each sample
 * request is a valid request of its operation, and the typed-client samples compile under
 * `strict` against the client. e2e/code-samples.spec.ts runs all of them against a server.
 */

type Json = Record<string, unknown>;

/** The JSON Schema formats of the document, which openapi-backend's ajv does not know. */
const FORMATS: Record<string, RegExp> = {
  uuid: /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i,
  date: /^\d{4}-\d{2}-\d{2}$/,
  'date-time': /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/,
};

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const SERVER = 'https://api.example.test';
const doc = buildOpenApiDocument(SERVER);
const paths = doc.paths as Record<string, Record<string, Json>>;

function samplesOf(method: string, docPath: string): CodeSample[] {
  return (paths[docPath]![method]!['x-codeSamples'] as CodeSample[] | undefined) ?? [];
}

describe('code samples of the OpenAPI document', () => {
  it('cover every operation but HEAD (the headers of its GET), in the same four languages', () => {
    for (const [docPath, item] of Object.entries(paths)) {
      for (const method of Object.keys(item)) {
        if (method === 'head') {
          expect(samplesOf(method, docPath)).toEqual([]);
          continue;
        }
        expect(SAMPLE_REQUESTS[`${method} ${docPath}`], `a sample request for ${method} ${docPath}`).toBeDefined();
        expect(samplesOf(method, docPath).map((s) => `${s.lang}: ${s.label}`)).toEqual([
          'shell: curl',
          'javascript: JavaScript (fetch)',
          'typescript: TypeScript (typed client)',
          'python: Python (requests)',
        ]);
      }
    }
  });

  it('send requests the document accepts, naming only documented parameters', async () => {
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
    for (const [key, request] of Object.entries(SAMPLE_REQUESTS)) {
      const operation = paths[request.path]![request.method]!;
      const documented = ((operation.parameters as { name: string; in: string }[] | undefined) ?? []).filter((p) => p.in === 'query').map((p) => p.name);
      for (const name of Object.keys(request.query ?? {})) expect(documented, `${key}: query parameter ${name}`).toContain(name);
      const concretePath = request.path.replace(/\{(\w+)\}/g, (_m, name: string) => {
        const param = request.pathParams![name]!;
        return 'example' in param ? param.example : 'cdcal_placeholder';
      });
      const result = api.validateRequest({
        method: request.method,
        path: concretePath,
        query: Object.fromEntries(Object.entries(request.query ?? {}).map(([k, v]) => [k, String(v)])),
        headers: { 'content-type': 'application/json', 'x-api-key': 'cdapi_placeholder' },
        ...(request.body ? { body: request.body } : {}),
      });
      expect(result.errors ?? [], `${key}: ${JSON.stringify(result.errors)}`).toEqual([]);
    }
  });

  it('use the server of the document and read secrets from the environment', () => {
    for (const [docPath, item] of Object.entries(paths)) {
      for (const method of Object.keys(item)) {
        for (const sample of samplesOf(method, docPath)) {
          expect(sample.source, `${method} ${docPath} ${sample.label}`).toContain(`${SERVER}/api/v1`);
          expect(sample.source).not.toMatch(/cdapi_[0-9A-Za-z]{10,}|cdcal_[0-9A-Za-z]{10,}/);
        }
      }
    }
  });

  describe('typed-client samples', () => {
    // Inside the repository, so that the samples resolve @types/node and openapi-fetch.
    let dir = '';
    afterAll(() => {
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    it('compile under strict against clients/typescript', () => {
      mkdirSync(path.join(ROOT, '.data'), { recursive: true });
      dir = mkdtempSync(path.join(ROOT, '.data', 'code-samples-'));
      const files: string[] = [];
      for (const [docPath, item] of Object.entries(paths)) {
        for (const method of Object.keys(item)) {
          if (method === 'head') continue;
          const sample = samplesOf(method, docPath).find((s) => s.lang === 'typescript')!;
          const file = path.join(dir, `${method}-${docPath.replace(/\W+/g, '-')}.ts`);
          writeFileSync(file, sample.source);
          files.push(file);
        }
      }
      const program = ts.createProgram(files, {
        strict: true,
        noUncheckedIndexedAccess: true,
        exactOptionalPropertyTypes: true,
        target: ts.ScriptTarget.ES2022,
        module: ts.ModuleKind.ESNext,
        moduleResolution: ts.ModuleResolutionKind.Bundler,
        lib: ['lib.es2022.d.ts', 'lib.dom.d.ts'],
        types: ['node'],
        typeRoots: [path.join(ROOT, 'node_modules', '@types')],
        skipLibCheck: true,
        noEmit: true,
        baseUrl: ROOT,
        paths: { [CLIENT_PACKAGE]: ['clients/typescript/src/index.ts'] },
      });
      const diagnostics = ts.getPreEmitDiagnostics(program).map((d) => {
        const where = d.file ? `${path.basename(d.file.fileName)}:${d.file.getLineAndCharacterOfPosition(d.start ?? 0).line + 1}` : '';
        return `${where} ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`;
      });
      expect(diagnostics).toEqual([]);
    });
  });
});
