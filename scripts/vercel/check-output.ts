import path from 'node:path';
import { appSmokePlan, smokeFunctions } from './function-smoke';
import { checkVercelOutput, FUNCTION_SIZE_LIMIT_BYTES, formatMB } from './output-checks';

/**
 * `npm run vercel:check [-- <output dir>] [--static-only]`: checks what
 * `npm run vercel:output` wrote (default .vercel/output).
 *
 * 1. The files (scripts/vercel/output-checks.ts): every function with its size, largest
 *    first, under Vercel's limit; migrations and Scalar's bundle in the functions that read
 *    them; vercel.json's crons in config.json.
 * 2. Unless --static-only, the functions that read those files are run on their own, as
 *    Vercel runs them, and answer requests that need the files (scripts/vercel/function-smoke.ts).
 *
 * Exits 1 with one line per problem.
 */

const args = process.argv.slice(2);
const staticOnly = args.includes('--static-only');
const outputDir = path.resolve(args.find((a) => !a.startsWith('--')) ?? '.vercel/output');
const projectDir = process.cwd();

function fail(title: string, problems: string[]): never {
  console.error(`\n${title}:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  process.exit(1);
}

const { functions, problems } = checkVercelOutput(outputDir, projectDir);

if (functions.length > 0) {
  console.log(`Functions in ${path.relative(projectDir, outputDir) || '.'}/functions (uncompressed, limit ${formatMB(FUNCTION_SIZE_LIMIT_BYTES)}):`);
  for (const fn of functions) {
    const others = fn.routes.length - 1;
    console.log(
      `  ${formatMB(fn.bytes).padStart(9)}  ${String(fn.fileCount).padStart(5)} files  ${fn.runtime.padEnd(11)} ${fn.name}${others > 0 ? ` (and ${others} more route${others === 1 ? '' : 's'})` : ''}`,
    );
  }
  const [largest] = functions;
  if (largest) console.log(`Largest: ${largest.name} at ${formatMB(largest.bytes)} (${((largest.bytes / FUNCTION_SIZE_LIMIT_BYTES) * 100).toFixed(0)}% of the limit)`);
}
if (problems.length > 0) fail('The Vercel build output is not deployable as it is', problems);
console.log('Files checked: sizes, run-time files (migrations, Scalar bundle) and crons are in place.');

if (!staticOnly) {
  console.log('\nEach function that reads files at run time, served alone from its traced files:');
  const results = await smokeFunctions(outputDir, projectDir, appSmokePlan(projectDir, outputDir));
  for (const r of results) console.log(`  ${r.ok ? 'ok  ' : 'FAIL'} ${r.route}: GET ${r.request} -> ${r.ok ? r.detail : 'see below'}`);
  const failed = results.filter((r) => !r.ok);
  if (failed.length > 0) fail('Functions that fail on their own traced files', failed.map((r) => `${r.route}: GET ${r.request}: ${r.detail}`));
}
