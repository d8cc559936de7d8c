import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { expect, test } from '@playwright/test';
import Papa from 'papaparse';
import { DEMO_USERS } from '@/db/seed/demo';
import { API_KEY_ENV, CLIENT_PACKAGE, EXAMPLE_CONTRACT_ID, EXAMPLE_EVENT_ID, SAMPLE_REQUESTS, type CodeSample } from '@/server/rest/code-samples';
import { API, loadContractDocument, operationId, type ContractDocument } from './support/api';
import { describeRun, runProcess } from './support/child-process';
import { createFeedToken, mintKey, signInOverHttp } from './support/session';

/**
 * Every code sample of the served OpenAPI document (x-codeSamples: what the API reference
 * shows) is run as a reader would run it: curl in bash, JavaScript in Node, the typed
 * client under tsx, Python with requests. Their JSON output is validated against the
 * document; saved files are checked for what a reader expects in them.
 *
 * Only two things are changed in a sample before it runs: the get-one sample's example
 * id becomes a contract the key can read, and the typed-client samples import the client
 * from this repository instead of the package name (it is not published).
 */

const ROOT = path.resolve(import.meta.dirname, '..');
const CLIENT_ENTRY = path.join(ROOT, 'clients', 'typescript', 'src', 'index.ts');
const FEED_TOKEN_ENV = 'CALENDAR_FEED_TOKEN';

const RUNNERS: Record<CodeSample['lang'], { file: string; command: (file: string) => [string, string[]] }> = {
  shell: { file: 'sample.sh', command: (file) => ['bash', [file]] },
  javascript: { file: 'sample.mjs', command: (file) => [process.execPath, [file]] },
  typescript: { file: 'sample.ts', command: (file) => [process.execPath, ['--import', 'tsx', file]] },
  python: { file: 'sample.py', command: (file) => ['python3', [file]] },
};
const LANGS = Object.keys(RUNNERS) as CodeSample['lang'][];

type Json = Record<string, unknown>;

let doc: ContractDocument;
let apiKey: string;
let feedToken: string;
let contractId: string;
let eventId: string;
let completedTotal: number;

test.beforeAll(async ({ playwright, baseURL }) => {
  const session = await playwright.request.newContext({ baseURL });
  await signInOverHttp(session, DEMO_USERS.alice.email);
  apiKey = (await mintKey(session, 'e2e code samples')).key;
  feedToken = await createFeedToken(session, 'e2e code samples');
  doc = await loadContractDocument(session);
  const list = await session.get(`${API}/contracts?status=completed&limit=1`, { headers: { 'X-API-Key': apiKey } });
  expect(list.status()).toBe(200);
  const body = (await list.json()) as { data: { contracts: { id: string }[]; pagination: { total: number } } };
  contractId = body.data.contracts[0]!.id;
  completedTotal = body.data.pagination.total;
  // The demo data's writes are events of the list: the oldest one the key sees.
  const events = await session.get(`${API}/events?limit=1`, { headers: { 'X-API-Key': apiKey } });
  expect(events.status()).toBe(200);
  eventId = ((await events.json()) as { data: { events: { id: string }[] } }).data.events[0]!.id;
  expect(completedTotal, 'the demo data has completed contracts').toBeGreaterThan(0);
  await session.dispose();
});

function samplesOf(method: string, docPath: string): CodeSample[] {
  const operation = ((doc.definition.paths as Json)[docPath] as Record<string, Json>)[method]!;
  return (operation['x-codeSamples'] as CodeSample[] | undefined) ?? [];
}

test('every operation of the document but HEAD has one sample per language', () => {
  for (const [docPath, item] of Object.entries(doc.definition.paths as Record<string, Record<string, Json>>)) {
    for (const method of Object.keys(item)) {
      if (method === 'head') continue;
      expect(
        samplesOf(method, docPath).map((s) => s.lang),
        `${method.toUpperCase()} ${docPath}`,
      ).toEqual(LANGS);
    }
  }
});

for (const [operationKey, request] of Object.entries(SAMPLE_REQUESTS)) {
  const [method, docPath] = operationKey.split(' ') as [string, string];
  for (const lang of LANGS) {
    test(`${method.toUpperCase()} ${docPath}: the ${lang} sample runs`, async ({}, testInfo) => {
      const sample = samplesOf(method, docPath).find((s) => s.lang === lang);
      expect(sample, `the ${lang} sample`).toBeDefined();
      let source = sample!.source.replaceAll(EXAMPLE_CONTRACT_ID, contractId).replaceAll(EXAMPLE_EVENT_ID, eventId);
      if (lang === 'typescript') {
        expect(source).toContain(`'${CLIENT_PACKAGE}'`);
        source = source.replace(`'${CLIENT_PACKAGE}'`, JSON.stringify(CLIENT_ENTRY));
      }
      // Inside the repository (test-results/), so that `--import tsx` resolves.
      const dir = testInfo.outputPath('run');
      mkdirSync(dir, { recursive: true });
      const runner = RUNNERS[lang];
      writeFileSync(path.join(dir, runner.file), `${source}\n`);
      const [command, args] = runner.command(runner.file);
      const result = await runProcess(command, args, {
        cwd: dir,
        env: { [API_KEY_ENV]: apiKey, [FEED_TOKEN_ENV]: feedToken },
      });
      expect(result.code, describeRun(`${lang} sample`, result)).toBe(0);

      if (!request.saveAs) {
        const body = JSON.parse(result.stdout) as Json;
        const validation = doc.api.validateResponse(body, operationId(doc, method, docPath), 200);
        expect(validation.errors, 'the printed body matches the document').toBeNull();
        if (docPath === '/contracts') {
          const { contracts, pagination } = (body as { data: { contracts: { status: string }[]; pagination: { limit: number } } }).data;
          expect(pagination.limit).toBe(request.query!.limit);
          expect(contracts.every((c) => c.status === 'completed'), 'the sample filters on status=completed').toBe(true);
        } else if (docPath === '/events') {
          const { events, pagination } = (body as { data: { events: { type: string }[]; pagination: { limit: number } } }).data;
          expect(pagination.limit).toBe(request.query!.limit);
          expect(events.every((e) => e.type === 'contract.updated' || e.type === 'contract.deleted'), 'the sample keeps two types').toBe(true);
        } else if (docPath === '/events/{id}') {
          expect((body as { data: { event: { id: string } } }).data.event.id).toBe(eventId);
        } else {
          expect((body as { data: { contract: { id: string } } }).data.contract.id).toBe(contractId);
        }
        return;
      }

      const saved = readFileSync(path.join(dir, request.saveAs));
      if (request.saveAs.endsWith('.csv')) {
        const text = saved.toString('utf8');
        expect(text.startsWith('\uFEFF'), 'bom: true starts the file with a byte order mark').toBe(true);
        const rows = Papa.parse<Record<string, string>>(text.slice(1), { header: true, skipEmptyLines: true });
        expect(rows.errors).toEqual([]);
        expect(rows.meta.fields?.slice(0, 3)).toEqual(['id', 'title', 'status']);
        expect(rows.data).toHaveLength(completedTotal);
        expect(rows.data.every((row) => row.status === 'completed')).toBe(true);
      } else if (request.saveAs.endsWith('.json')) {
        const document = JSON.parse(saved.toString('utf8')) as Json;
        expect(document.openapi).toBe('3.1.0');
        expect(Object.keys(document.paths as Json)).toEqual(Object.keys(doc.definition.paths as Json));
      } else {
        const text = saved.toString('utf8');
        expect(text.startsWith('BEGIN:VCALENDAR\r\n'), text.slice(0, 80)).toBe(true);
        expect(text).toContain('BEGIN:VEVENT');
        expect(text.trimEnd().endsWith('END:VCALENDAR')).toBe(true);
      }
    });
  }
}
