import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { CHANGELOG } from '@/server/rest/changelog';
import { DEPRECATIONS } from '@/server/rest/deprecations';
import { buildOpenApiDocument } from '@/server/rest/openapi-document';
import { BASELINE_BASE_URL, BASELINE_FILE, checkBaseline, updateBaseline } from './openapi/baseline';
import type { Json } from './openapi/contract';

/**
 * npm run openapi:breaking                       today's OpenAPI document against the committed
 *                                                baseline (openapi/v1-baseline.json): exits 1 naming
 *                                                each breaking change, or a change without its
 *                                                changelog entry (scripts/openapi/baseline.ts)
 * npm run openapi:breaking -- --update-baseline  writes today's contract as the baseline, on purpose,
 *                                                in the commit of its changelog entry
 *
 * The rules are docs/api-changes.md's; the comparison is scripts/openapi/breaking-changes.ts.
 */

const mode = process.argv[2];
if (mode !== undefined && mode !== '--update-baseline') {
  console.error('Usage: tsx scripts/openapi-breaking.ts [--update-baseline]');
  process.exit(2);
}

let baseline: Json | undefined;
try {
  baseline = JSON.parse(readFileSync(BASELINE_FILE, 'utf8')) as Json;
} catch (error) {
  if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
}
const inputs = { document: buildOpenApiDocument(BASELINE_BASE_URL), baseline, changelog: CHANGELOG, deprecations: DEPRECATIONS };
const version = String((inputs.document.info as Json).version);

if (mode === '--update-baseline') {
  const result = updateBaseline(inputs);
  if (!result.file) {
    console.error(`${BASELINE_FILE} not written:\n${result.problems.map((p) => `  - ${p}`).join('\n')}`);
    process.exit(1);
  }
  mkdirSync(path.dirname(BASELINE_FILE), { recursive: true });
  writeFileSync(BASELINE_FILE, `${JSON.stringify(result.file, null, 2)}\n`);
  const accepted = result.breaking.length > 0 ? `, accepting ${result.breaking.length} breaking change(s):\n${result.breaking.map((c) => `  - ${c.at}: ${c.message}`).join('\n')}` : '';
  console.log(`Wrote ${BASELINE_FILE} at version ${version}${accepted}`);
} else {
  const { problems } = checkBaseline(inputs);
  if (problems.length > 0) {
    console.error(`OpenAPI document against ${BASELINE_FILE}: ${problems.length} problem(s)\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    console.error('See docs/api-changes.md: a breaking change needs a deprecation first (or /api/v2); every change of the document needs a changelog entry.');
    process.exit(1);
  }
  console.log(`No breaking change against ${BASELINE_FILE}, made at ${version}; the deprecations meet their policy.`);
}
