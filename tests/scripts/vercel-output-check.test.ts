import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { smokeFunctions } from '@/scripts/vercel/function-smoke';
import { checkVercelOutput, FUNCTION_SIZE_LIMIT_BYTES } from '@/scripts/vercel/output-checks';

const run = promisify(execFile);
const TSX = path.resolve('node_modules/.bin/tsx');
const CHECK = path.resolve('scripts/vercel/check-output.ts');

// `npm run vercel:check` on Build Output API directories laid out as `vercel build` writes
// them for this app (functions grouped behind symlinks, files listed in filePathMap and
// left in the project). CI runs the check on the real output; these prove each check fails
// when what it guards is missing.

const MIGRATIONS = ['db/migrations/0000_init.sql', 'db/migrations/0001_next.sql', 'db/migrations/meta/_journal.json'];
const SCALAR = ['node_modules/@scalar/api-reference/package.json', 'node_modules/@scalar/api-reference/dist/browser/standalone.js'];
const CRON = { path: '/api/cron/webhooks', schedule: '* * * * *' };

let project: string;
let output: string;

function write(file: string, content: string) {
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, content);
}

/** A function directory with its launcher and a filePathMap of project files. */
function writeFunction(name: string, projectFiles: string[]) {
  const dir = path.join(output, 'functions', `${name}.func`);
  write(path.join(dir, '___next_launcher.cjs'), 'module.exports = () => {};\n');
  const filePathMap = Object.fromEntries(projectFiles.map((f) => [f, f]));
  write(path.join(dir, '.vc-config.json'), JSON.stringify({ runtime: 'nodejs24.x', handler: '___next_launcher.cjs', filePathMap }));
}

/** Another route served by an existing function, as the builder writes it. */
function alias(route: string, target: string) {
  const link = path.join(output, 'functions', `${route}.func`);
  mkdirSync(path.dirname(link), { recursive: true });
  symlinkSync(path.relative(path.dirname(link), path.join(output, 'functions', `${target}.func`)), link);
}

beforeEach(() => {
  project = mkdtempSync(path.join(os.tmpdir(), 'cda-vercel-check-'));
  output = path.join(project, '.vercel', 'output');
  for (const f of [...MIGRATIONS, ...SCALAR, 'node_modules/next/server.js']) write(path.join(project, f), `// ${f}\n`);
  write(path.join(project, 'vercel.json'), JSON.stringify({ framework: 'nextjs', crons: [CRON] }));
  write(path.join(output, 'config.json'), JSON.stringify({ version: 3, routes: [], crons: [CRON] }));
  write(path.join(output, 'builds.json'), JSON.stringify({ target: 'preview', builds: [] }));
  writeFunction('api/v1/[[...path]]', [...MIGRATIONS, ...SCALAR, 'node_modules/next/server.js']);
  alias('api/cron/webhooks', 'api/v1/[[...path]]');
  alias('docs/api', 'api/v1/[[...path]]');
  alias('docs/api/assets/[file]', 'api/v1/[[...path]]');
  writeFunction('_middleware', ['node_modules/next/server.js']);
});

afterEach(() => rmSync(project, { recursive: true, force: true }));

describe('checkVercelOutput', () => {
  it('passes a complete output and lists each function once, with every route it serves', () => {
    const { functions, problems } = checkVercelOutput(output, project);
    expect(problems).toEqual([]);
    expect(functions.map((f) => f.name).sort()).toEqual(['_middleware', 'api/v1/[[...path]]']);
    const api = functions.find((f) => f.name === 'api/v1/[[...path]]')!;
    expect(api.routes.sort()).toEqual(['api/cron/webhooks', 'api/v1/[[...path]]', 'docs/api', 'docs/api/assets/[file]']);
    expect(api.files.has('db/migrations/meta/_journal.json')).toBe(true);
  });

  it('fails a function over 250 MB, counting the project files its filePathMap adds', () => {
    // A sparse file: its size counts, no disk is used.
    const big = path.join(project, 'node_modules/huge/blob.wasm');
    write(big, '');
    truncateSync(big, FUNCTION_SIZE_LIMIT_BYTES + 1);
    writeFunction('_middleware', ['node_modules/next/server.js', 'node_modules/huge/blob.wasm']);
    const { functions, problems } = checkVercelOutput(output, project);
    expect(functions[0]!.name).toBe('_middleware');
    expect(functions[0]!.bytes).toBeGreaterThan(FUNCTION_SIZE_LIMIT_BYTES);
    expect(problems).toEqual([expect.stringMatching(/functions\/_middleware\.func is 250\.0 MB, over Vercel's 250\.0 MB limit/)]);
  });

  it('fails an API function that lacks a migration or the journal', () => {
    writeFunction('api/v1/[[...path]]', [MIGRATIONS[0]!, ...SCALAR]);
    const { problems } = checkVercelOutput(output, project);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toContain('lacks the SQL migrations and their journal');
    expect(problems[0]).toContain('missing db/migrations/0001_next.sql, db/migrations/meta/_journal.json');
    expect(problems[0]).toContain('api/cron/webhooks');
  });

  it('requires a migration added to the repository, not a fixed list', () => {
    write(path.join(project, 'db/migrations/0002_later.sql'), 'SELECT 1;\n');
    const { problems } = checkVercelOutput(output, project);
    expect(problems.join('\n')).toContain('missing db/migrations/0002_later.sql');
  });

  it("fails the API reference's functions without Scalar's bundle", () => {
    writeFunction('api/v1/[[...path]]', [...MIGRATIONS, SCALAR[0]!]);
    const { problems } = checkVercelOutput(output, project);
    expect(problems).toEqual([expect.stringContaining("lacks Scalar's standalone bundle")]);
    expect(problems[0]).toContain('missing node_modules/@scalar/api-reference/dist/browser/standalone.js');
  });

  it('fails when a route whose files are checked is gone, instead of checking nothing', () => {
    rmSync(path.join(output, 'functions', 'docs', 'api', 'assets', '[file].func'));
    const { problems } = checkVercelOutput(output, project);
    expect(problems).toEqual([expect.stringContaining('no function serves docs/api/assets/[file]')]);
  });

  it("fails when vercel.json's cron is not in config.json", () => {
    write(path.join(output, 'config.json'), JSON.stringify({ version: 3, routes: [] }));
    const { problems } = checkVercelOutput(output, project);
    expect(problems).toEqual([expect.stringContaining("vercel.json's cron /api/cron/webhooks (* * * * *) is missing from .vercel/output/config.json")]);
  });

  it('fails when a filePathMap entry points at a file the project does not have', () => {
    writeFunction('_middleware', ['node_modules/next/server.js', 'node_modules/gone/index.js']);
    const { problems } = checkVercelOutput(output, project);
    expect(problems).toEqual([expect.stringContaining('lists node_modules/gone/index.js in its filePathMap, but the file does not exist')]);
  });

  it('fails a build that recorded an error, and a directory with no output', () => {
    write(path.join(output, 'builds.json'), JSON.stringify({ error: { message: 'Command "npm run vercel-build" exited with 1' } }));
    expect(checkVercelOutput(output, project).problems).toContain('vercel build failed: Command "npm run vercel-build" exited with 1');
    expect(checkVercelOutput(path.join(project, 'nowhere'), project).problems).toEqual([expect.stringContaining('holds no build output')]);
  });
});

describe('npm run vercel:check', () => {
  it('prints the functions, largest first, and exits 0 on a deployable output', async () => {
    const { stdout } = await run(TSX, [CHECK, output, '--static-only'], { cwd: project });
    expect(stdout).toMatch(/Largest: (api\/v1\/\[\[\.\.\.path\]\]|_middleware) at \d+\.\d MB/);
    expect(stdout).toContain('api/v1/[[...path]] (and 3 more routes)');
  });

  it('exits 1 naming the problem', async () => {
    const config = JSON.parse(readFileSync(path.join(output, 'config.json'), 'utf8')) as Record<string, unknown>;
    write(path.join(output, 'config.json'), JSON.stringify({ ...config, crons: [] }));
    const failure = await run(TSX, [CHECK, output, '--static-only'], { cwd: project }).then(
      () => undefined,
      (error: { code: number; stderr: string }) => error,
    );
    expect(failure?.code).toBe(1);
    expect(failure?.stderr).toContain('The Vercel build output is not deployable as it is');
    expect(failure?.stderr).toContain('/api/cron/webhooks');
  });
});

describe('smokeFunctions', () => {
  // A function as the builder writes one: a launcher that changes to its own directory and
  // reads a file by a relative path at run time, as the app reads db/migrations.
  const LAUNCHER = `process.chdir(__dirname);
const fs = require('node:fs');
module.exports = (req, res) => {
  try { res.end(fs.readFileSync('db/migrations/0001_next.sql')); }
  catch (error) { console.error(error.message); res.statusCode = 500; res.end('missing'); }
};
`;
  const plan = { 'api/v1/[[...path]]': [{ path: '/api/v1/openapi.json', status: 200, contains: 'db/migrations/0001_next.sql' }] };

  it('serves a function from its own files and the files of its filePathMap only', async () => {
    write(path.join(output, 'functions', 'api/v1/[[...path]].func', '___next_launcher.cjs'), LAUNCHER);
    const results = await smokeFunctions(output, project, plan);
    expect(results).toEqual([{ route: 'api/v1/[[...path]]', request: '/api/v1/openapi.json', ok: true, detail: expect.stringMatching(/^200, \d+ bytes$/) }]);
  });

  it('fails when a file the function reads is left out of its filePathMap, even though the project has it', async () => {
    writeFunction('api/v1/[[...path]]', [MIGRATIONS[0]!, ...SCALAR]);
    write(path.join(output, 'functions', 'api/v1/[[...path]].func', '___next_launcher.cjs'), LAUNCHER);
    const [result] = await smokeFunctions(output, project, plan);
    expect(result!.ok).toBe(false);
    expect(result!.detail).toContain('status 500, expected 200');
    expect(result!.detail).toContain("ENOENT: no such file or directory, open 'db/migrations/0001_next.sql'");
  });
});
