import { existsSync, lstatSync, readdirSync, readFileSync, realpathSync, statSync } from 'node:fs';
import path from 'node:path';

/**
 * What a deployment needs from `vercel build`'s output (.vercel/output, Build Output API v3),
 * checked on the files themselves: the build succeeded, every function fits Vercel's size
 * limit, the files the app reads at run time travel with the functions that read them,
 * and the cron jobs of vercel.json reach the deployment. scripts/vercel/check-output.ts
 * prints the result; tests/scripts/vercel-output-check.test.ts proves each check can fail.
 */

/**
 * Vercel's limit on a function's uncompressed size: 250 MB. Counted in decimal megabytes,
 * the stricter reading, so that a function this check passes is never refused.
 */
export const FUNCTION_SIZE_LIMIT_BYTES = 250 * 1000 * 1000;

export interface FunctionOutput {
  /** The function's directory, relative to functions/, without `.func` (e.g. `api/cron/webhooks`). */
  name: string;
  /** Every route this function serves: its own name and the names of the symlinks to it. */
  routes: string[];
  runtime: string;
  /** Uncompressed bytes: the files in its directory plus the files its filePathMap adds. */
  bytes: number;
  fileCount: number;
  /** Paths as the function sees them (relative to its root). */
  files: Set<string>;
}

export interface OutputReport {
  functions: FunctionOutput[];
  problems: string[];
}

/**
 * A rule: the functions serving these routes read these files at run time. `routes` is a
 * predicate on the route names (functions/ paths without `.func`).
 */
interface RuntimeFiles {
  what: string;
  why: string;
  servesRoute: (route: string) => boolean;
  /** The routes that must exist at all (a renamed route must update the rule, not skip it). */
  mustExist: string[];
  files: (projectDir: string) => string[];
}

const SCALAR_FILES = ['node_modules/@scalar/api-reference/package.json', 'node_modules/@scalar/api-reference/dist/browser/standalone.js'];

/** The migrations as the repository has them: every SQL file and drizzle's journal, which lists them. */
export function migrationFiles(projectDir: string): string[] {
  const dir = path.join(projectDir, 'db', 'migrations');
  const sql = readdirSync(dir)
    .filter((f) => f.endsWith('.sql'))
    .sort()
    .map((f) => `db/migrations/${f}`);
  return [...sql, 'db/migrations/meta/_journal.json'];
}

export const RUNTIME_FILES: RuntimeFiles[] = [
  {
    what: 'the SQL migrations and their journal',
    why: 'db/client.ts applies them from db/migrations by path at run time: every open of the embedded database, and any migration run from a function',
    servesRoute: (route) => route.startsWith('api/'),
    mustExist: ['api/v1/[[...path]]', 'api/cron/webhooks'],
    files: migrationFiles,
  },
  {
    what: "Scalar's standalone bundle",
    why: 'read at run time by server/docs/scalar-bundle.ts to serve the API reference',
    servesRoute: (route) => route === 'docs/api' || route === 'docs/api/assets/[file]',
    mustExist: ['docs/api', 'docs/api/assets/[file]'],
    files: () => SCALAR_FILES,
  },
];

interface VcConfig {
  runtime?: string;
  filePathMap?: Record<string, string>;
}

/** Every `.func` entry under functions/ (directories or symlinks to them), by route name. */
function findFunctionEntries(functionsDir: string, relDir = ''): string[] {
  const entries: string[] = [];
  for (const entry of readdirSync(path.join(functionsDir, relDir), { withFileTypes: true })) {
    const rel = relDir ? `${relDir}/${entry.name}` : entry.name;
    if (entry.name.endsWith('.func')) entries.push(rel);
    else if (entry.isDirectory()) entries.push(...findFunctionEntries(functionsDir, rel));
  }
  return entries;
}

/** Regular files and symlinks under `dir`, relative to it, with their sizes (a symlink counts as itself). */
function filesUnder(dir: string, relDir = ''): [string, number][] {
  const files: [string, number][] = [];
  for (const entry of readdirSync(path.join(dir, relDir), { withFileTypes: true })) {
    const rel = relDir ? `${relDir}/${entry.name}` : entry.name;
    if (entry.isDirectory()) files.push(...filesUnder(dir, rel));
    else files.push([rel, lstatSync(path.join(dir, rel)).size]);
  }
  return files;
}

/**
 * Reads one function: its own files plus those of its filePathMap, which `vercel build`
 * leaves in the project (paths relative to `projectDir`) and `vercel deploy --prebuilt`
 * uploads with the function.
 */
function readFunction(functionsDir: string, realDir: string, projectDir: string, problems: string[]): FunctionOutput {
  const name = path.relative(functionsDir, realDir).split(path.sep).join('/').replace(/\.func$/, '');
  const configPath = path.join(realDir, '.vc-config.json');
  let config: VcConfig = {};
  if (existsSync(configPath)) config = JSON.parse(readFileSync(configPath, 'utf8')) as VcConfig;
  else problems.push(`functions/${name}.func has no .vc-config.json`);

  const files = new Set<string>();
  let bytes = 0;
  for (const [rel, size] of filesUnder(realDir)) {
    files.add(rel);
    bytes += size;
  }
  for (const [inFunction, inProject] of Object.entries(config.filePathMap ?? {})) {
    if (files.has(inFunction)) continue;
    const source = path.resolve(projectDir, inProject);
    let size: number;
    try {
      size = lstatSync(source).size;
    } catch {
      problems.push(`functions/${name}.func lists ${inProject} in its filePathMap, but the file does not exist: the deployment would lack it`);
      continue;
    }
    files.add(inFunction);
    bytes += size;
  }
  return { name, routes: [], runtime: config.runtime ?? 'unknown', bytes, fileCount: files.size, files };
}

/** The cron jobs of vercel.json, which must reach the output's config.json unchanged. */
function checkCrons(projectDir: string, outputConfig: { crons?: unknown[] }, problems: string[]): void {
  const vercelJsonPath = path.join(projectDir, 'vercel.json');
  if (!existsSync(vercelJsonPath)) return;
  const { crons = [] } = JSON.parse(readFileSync(vercelJsonPath, 'utf8')) as { crons?: { path: string; schedule: string }[] };
  const built = (outputConfig.crons ?? []) as { path?: string; schedule?: string }[];
  for (const cron of crons) {
    if (!built.some((c) => c.path === cron.path && c.schedule === cron.schedule)) {
      problems.push(
        `vercel.json's cron ${cron.path} (${cron.schedule}) is missing from .vercel/output/config.json (its crons: ${JSON.stringify(built)}): Vercel would never call it`,
      );
    }
  }
}

/** Every check on one output directory. `projectDir` is where `vercel build` ran (filePathMap paths are relative to it). */
export function checkVercelOutput(outputDir: string, projectDir: string): OutputReport {
  const problems: string[] = [];
  const configPath = path.join(outputDir, 'config.json');
  const functionsDir = path.join(outputDir, 'functions');
  if (!existsSync(configPath) || !existsSync(functionsDir)) {
    return { functions: [], problems: [`${outputDir} holds no build output (config.json and functions/): run \`npm run vercel:output\` first`] };
  }
  // A failed `vercel build` still writes config.json ({ version: 3 }) and records the error in builds.json.
  const buildsPath = path.join(outputDir, 'builds.json');
  if (existsSync(buildsPath)) {
    const builds = JSON.parse(readFileSync(buildsPath, 'utf8')) as { error?: { message?: string } };
    if (builds.error) problems.push(`vercel build failed: ${builds.error.message ?? JSON.stringify(builds.error)}`);
  }
  const outputConfig = JSON.parse(readFileSync(configPath, 'utf8')) as { version?: number; crons?: unknown[] };
  if (outputConfig.version !== 3) problems.push(`config.json has version ${String(outputConfig.version)}, not the Build Output API's 3`);

  // Next.js's builder writes each group of routes once and points the other routes at it by symlink.
  const byRealDir = new Map<string, FunctionOutput>();
  for (const entry of findFunctionEntries(functionsDir)) {
    const entryPath = path.join(functionsDir, entry);
    let realDir: string;
    try {
      realDir = realpathSync(entryPath);
    } catch {
      problems.push(`functions/${entry} is a broken symlink`);
      continue;
    }
    if (!statSync(realDir).isDirectory()) {
      problems.push(`functions/${entry} is not a directory`);
      continue;
    }
    let fn = byRealDir.get(realDir);
    if (!fn) {
      fn = readFunction(functionsDir, realDir, projectDir, problems);
      byRealDir.set(realDir, fn);
    }
    fn.routes.push(entry.replace(/\.func$/, ''));
  }
  const functions = [...byRealDir.values()].sort((a, b) => b.bytes - a.bytes);
  if (functions.length === 0) problems.push('functions/ holds no function');

  for (const fn of functions) {
    if (fn.bytes > FUNCTION_SIZE_LIMIT_BYTES) {
      problems.push(`functions/${fn.name}.func is ${formatMB(fn.bytes)}, over Vercel's ${formatMB(FUNCTION_SIZE_LIMIT_BYTES)} limit for an uncompressed function`);
    }
  }

  const routeOwner = new Map<string, FunctionOutput>();
  for (const fn of functions) for (const route of fn.routes) routeOwner.set(route, fn);
  for (const rule of RUNTIME_FILES) {
    for (const route of rule.mustExist) {
      if (!routeOwner.has(route)) problems.push(`no function serves ${route}, which needs ${rule.what} (update RUNTIME_FILES in scripts/vercel/output-checks.ts if the route moved)`);
    }
    const required = rule.files(projectDir);
    for (const fn of functions) {
      const routes = fn.routes.filter(rule.servesRoute);
      if (routes.length === 0) continue;
      const missing = required.filter((f) => !fn.files.has(f));
      if (missing.length > 0) {
        problems.push(
          `functions/${fn.name}.func (serving ${routes.join(', ')}) lacks ${rule.what} (${rule.why}): missing ${missing.join(', ')} (add them to outputFileTracingIncludes in next.config.mjs)`,
        );
      }
    }
  }

  checkCrons(projectDir, outputConfig, problems);
  return { functions, problems: [...new Set(problems)] };
}

export function formatMB(bytes: number): string {
  return `${(bytes / 1e6).toFixed(1)} MB`;
}
