import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/**
 * `npm run vercel:output`: Vercel's own builder (`vercel build`, the CLI pinned below) run
 * here, without a Vercel account or network beyond the npm registry. It writes
 * .vercel/output (Build Output API v3), which `npm run vercel:check` then checks.
 *
 * What `vercel build` asks for, and how this answers offline:
 * - Project settings, from .vercel/project.json. Without them it wants to `vercel pull`
 *   them, which needs a login (or VERCEL_TOKEN) and api.vercel.com; with no TTY it prints
 *   "No Project Settings found locally" and, with --yes, exits 0 having built nothing.
 *   When the file is missing this writes a stub (placeholder ids, framework nextjs) for the
 *   build and removes it afterwards, so that a clone never carries a link to a project that
 *   does not exist (`vercel link` writes the real one; a linked checkout builds with it).
 * - Nothing else: no token, no VERCEL_* variable. It sets VERCEL=1 for the build itself.
 *   System variables (VERCEL_ENV, VERCEL_URL) are absent locally, so `npm run vercel-build`
 *   skips migrations as a preview deployment does.
 * - The install command of vercel.json (`npm ci`) would reinstall node_modules (a minute
 *   or more); @vercel/next runs any non-empty install command and ignores
 *   VERCEL_INSTALL_COMPLETED. Running this script needs node_modules already (tsx), so it
 *   builds with vercel.json's settings except `installCommand: ""`, through --local-config.
 *   `--install` runs vercel.json's own install command instead.
 */

// Newer releases do not install on these machines (docs/stack-notes); bump deliberately.
export const VERCEL_CLI = 'vercel@58.10.0';

const VERCEL_DIR = '.vercel';
const PROJECT_JSON = path.join(VERCEL_DIR, 'project.json');
const LOCAL_CONFIG = path.join(VERCEL_DIR, 'vercel.build-local.json');

const STUB_PROJECT = {
  projectId: 'prj_local_build_only',
  orgId: 'team_local_build_only',
  settings: { framework: 'nextjs' },
};

const args = process.argv.slice(2);
const install = args.includes('--install');
const passThrough = args.filter((a) => a !== '--install');

mkdirSync(VERCEL_DIR, { recursive: true });
const wroteStub = !existsSync(PROJECT_JSON);
if (wroteStub) writeFileSync(PROJECT_JSON, `${JSON.stringify(STUB_PROJECT, null, 2)}\n`);

const vercelArgs = ['--yes', VERCEL_CLI, 'build', ...passThrough];
if (!install) {
  const vercelJson = JSON.parse(readFileSync('vercel.json', 'utf8')) as Record<string, unknown>;
  writeFileSync(LOCAL_CONFIG, `${JSON.stringify({ ...vercelJson, installCommand: '' }, null, 2)}\n`);
  vercelArgs.push('--local-config', LOCAL_CONFIG);
}

let status: number;
try {
  console.log(`npx ${vercelArgs.join(' ')}${wroteStub ? ` (with a stub ${PROJECT_JSON})` : ''}`);
  const result = spawnSync('npx', vercelArgs, {
    // No TTY: the CLI never waits for an answer.
    stdio: ['ignore', 'inherit', 'inherit'],
    env: { ...process.env, VERCEL_TELEMETRY_DISABLED: '1', NEXT_TELEMETRY_DISABLED: '1' },
  });
  status = result.status ?? 1;
  if (result.error) {
    console.error(`Could not run npx: ${result.error.message}`);
    status = 1;
  }
} finally {
  if (wroteStub) rmSync(PROJECT_JSON, { force: true });
  rmSync(LOCAL_CONFIG, { force: true });
}

// Without project settings the CLI can exit 0 having built nothing: the output decides.
if (status === 0 && !existsSync(path.join(VERCEL_DIR, 'output', 'config.json'))) {
  console.error('vercel build exited 0 but wrote no .vercel/output/config.json');
  status = 1;
}
process.exit(status);
