import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { copyFileSync, cpSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readlinkSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/**
 * Runs functions of `vercel build`'s output the way Vercel does, each on its own: its
 * directory plus the files of its filePathMap copied into an empty directory, and
 * nothing else (no repository, no node_modules around it). Its launcher
 * (___next_launcher.cjs, which changes to the function's directory as on Vercel) serves
 * HTTP on a free port. A file the function reads at run time but the tracer left out
 * makes a request fail here as it would on Vercel.
 *
 * The database is the embedded one, in a temporary directory: opening it applies the
 * migrations from the function's own copy of db/migrations, so a request that reads a
 * table proves they travelled with the function. VERCEL=1 is left unset for that reason:
 * on Vercel the app refuses the embedded database and wants a shared rate-limit store.
 */

export interface SmokeRequest {
  path: string;
  headers?: Record<string, string>;
  status: number;
  /** Text the body must contain, or its least size in bytes. */
  contains?: string;
  minBytes?: number;
  /** Asked again, a second apart, until it answers as expected or this long has passed (a probe that turns ready). */
  retryForMs?: number;
}

export interface SmokeResult {
  route: string;
  request: string;
  ok: boolean;
  detail: string;
}

/** Copies a function and its traced files into `dest`, keeping symlinks (Next.js links its externals under .next/node_modules). */
export function assembleFunction(functionDir: string, projectDir: string, dest: string): void {
  cpSync(functionDir, dest, { recursive: true, verbatimSymlinks: true });
  const config = JSON.parse(readFileSync(path.join(functionDir, '.vc-config.json'), 'utf8')) as { filePathMap?: Record<string, string> };
  for (const [inFunction, inProject] of Object.entries(config.filePathMap ?? {})) {
    const source = path.join(projectDir, inProject);
    const target = path.join(dest, inFunction);
    mkdirSync(path.dirname(target), { recursive: true });
    if (lstatSync(source).isSymbolicLink()) symlinkSync(readlinkSync(source), target);
    else copyFileSync(source, target);
  }
}

// Serves the launcher's (req, res) handler on a free port and prints it.
const SERVE = `
const http = require('node:http');
const handler = require(process.argv[1]);
http.createServer((req, res) => handler(req, res)).listen(0, '127.0.0.1', function () { console.log('port ' + this.address().port); });
`;

interface Served {
  port: number;
  /** What the function printed so far, once it has been quiet for a moment (see `quiet`). */
  output: () => Promise<string>;
  stop: () => void;
}

/**
 * Resolves once `lastOutputAt()` is `quietMs` in the past (at most `maxMs` from now): what a
 * function printed before it answered (a failed read's ENOENT) travels on a pipe that this
 * process may read after the HTTP answer.
 */
async function quiet(lastOutputAt: () => number, quietMs = 250, maxMs = 3000): Promise<void> {
  const until = Date.now() + maxMs;
  while (Date.now() < until && Date.now() - lastOutputAt() < quietMs) await new Promise((resolve) => setTimeout(resolve, 50));
}

function serve(dir: string, env: Record<string, string>): Promise<Served> {
  return new Promise((resolve, reject) => {
    // Only what the function gets on Vercel: no variable of this shell (DATABASE_URL,
    // REDIS_URL, NODE_OPTIONS...) leaks in.
    const child = spawn(process.execPath, ['-e', SERVE, path.join(dir, '___next_launcher.cjs')], {
      cwd: os.tmpdir(),
      // The launcher sets NODE_ENV=production itself, as on Vercel.
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: dir, ...env } as unknown as NodeJS.ProcessEnv,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    let lastOutputAt = Date.now();
    const stop = () => {
      if (child.exitCode === null) child.kill('SIGKILL');
    };
    const timer = setTimeout(() => {
      stop();
      reject(new Error(`the function did not listen within 30 s:\n${output}`));
    }, 30_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      lastOutputAt = Date.now();
      const port = /^port (\d+)$/m.exec(output)?.[1];
      if (port) {
        clearTimeout(timer);
        resolve({ port: Number(port), output: async () => (await quiet(() => lastOutputAt), output), stop });
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the function exited (${code}) before listening:\n${output}`));
    });
  });
}

async function check(port: number, request: SmokeRequest): Promise<{ ok: boolean; detail: string }> {
  const res = await fetch(`http://127.0.0.1:${port}${request.path}`, { headers: request.headers, signal: AbortSignal.timeout(120_000) });
  const body = Buffer.from(await res.arrayBuffer());
  const problems: string[] = [];
  if (res.status !== request.status) problems.push(`status ${res.status}, expected ${request.status}: ${body.toString('utf8', 0, 300)}`);
  if (request.contains && !body.toString('utf8').includes(request.contains)) problems.push(`body lacks ${JSON.stringify(request.contains)}`);
  if (request.minBytes && body.byteLength < request.minBytes) problems.push(`body is ${body.byteLength} bytes, expected at least ${request.minBytes}`);
  return { ok: problems.length === 0, detail: problems.length ? problems.join('; ') : `${res.status}, ${body.byteLength} bytes` };
}

/** One request; a failure to get an answer at all is a failed check too (with fetch's cause, which says why). */
async function attempt(port: number, request: SmokeRequest): Promise<{ ok: boolean; detail: string }> {
  try {
    return await check(port, request);
  } catch (error) {
    const cause = (error as { cause?: { message?: string } }).cause?.message;
    return { ok: false, detail: `${(error as Error).message}${cause ? ` (${cause})` : ''}` };
  }
}

/**
 * Serves each route's function (once per function, however many routes share it) and
 * sends it the requests listed for that route.
 */
export async function smokeFunctions(outputDir: string, projectDir: string, plan: Record<string, SmokeRequest[]>): Promise<SmokeResult[]> {
  const byFunction = new Map<string, string[]>();
  for (const route of Object.keys(plan)) {
    const realDir = realpathSync(path.join(outputDir, 'functions', `${route}.func`));
    byFunction.set(realDir, [...(byFunction.get(realDir) ?? []), route]);
  }
  const results: SmokeResult[] = [];
  for (const [functionDir, routes] of byFunction) {
    const work = mkdtempSync(path.join(os.tmpdir(), 'cda-vercel-fn-'));
    let served: Served | undefined;
    try {
      const dir = path.join(work, 'function');
      assembleFunction(functionDir, projectDir, dir);
      mkdirSync(path.join(work, 'data'));
      served = await serve(dir, {
        AUTH_SECRET: randomBytes(32).toString('base64url'),
        CRON_SECRET: SMOKE_CRON_SECRET,
        // Production refuses to start without a way to send mail; the smoke test sends none.
        MAIL_TRANSPORT: 'log',
        PGLITE_DIR: path.join(work, 'data', 'pglite'),
        // The in-process webhook worker is off on Vercel (the cron route drains the queue).
        WEBHOOK_WORKER: 'off',
      });
      for (const route of routes) {
        for (const request of plan[route] ?? []) {
          const giveUpAt = Date.now() + (request.retryForMs ?? 0);
          let result = await attempt(served.port, request);
          while (!result.ok && Date.now() < giveUpAt) {
            await new Promise((resolve) => setTimeout(resolve, 1000));
            result = await attempt(served.port, request);
          }
          // The function's own log says why (a missing file shows as ENOENT there).
          if (!result.ok) result.detail += `\n    function output:\n${lastLines(await served.output(), 20)}`;
          results.push({ route, request: request.path, ...result });
        }
      }
    } catch (error) {
      for (const route of routes) results.push({ route, request: '(start)', ok: false, detail: (error as Error).message });
    } finally {
      served?.stop();
      rmSync(work, { recursive: true, force: true });
    }
  }
  return results;
}

function lastLines(text: string, count: number): string {
  return text
    .trimEnd()
    .split('\n')
    .slice(-count)
    .map((line) => `      ${line}`)
    .join('\n');
}

export const SMOKE_CRON_SECRET = randomBytes(24).toString('base64url');

/** What this app's functions must answer from their own files alone. */
export function appSmokePlan(projectDir: string, outputDir: string): Record<string, SmokeRequest[]> {
  const { version } = JSON.parse(readFileSync(path.join(projectDir, 'node_modules/@scalar/api-reference/package.json'), 'utf8')) as { version: string };
  const bundle = `scalar-api-reference-${version}.js`;
  return {
    // Reads the webhook tables: the embedded database opened and migrated from the function's db/migrations.
    'api/cron/webhooks': [{ path: '/api/cron/webhooks', headers: { authorization: `Bearer ${SMOKE_CRON_SECRET}` }, status: 200, contains: '"success":true' }],
    'api/v1/[[...path]]': [{ path: '/api/v1/openapi.json', status: 200, contains: '"openapi":"3.1' }],
    // Scalar's package.json (the versioned name) and its standalone bundle, from the function's node_modules.
    'docs/api': [{ path: '/docs/api', status: 200, contains: `/docs/api/assets/${bundle}` }],
    'docs/api/assets/[file]': [{ path: `/docs/api/assets/${bundle}`, status: 200, minBytes: 1_000_000 }],
    // Readiness, where the build has it: the embedded database migrated to the latest
    // migration this build knows. Opening it the first time (initdb) takes longer than a
    // check's 1 s budget: 503 until then.
    ...(existsSync(path.join(outputDir, 'functions', 'api/health/ready.func'))
      ? { 'api/health/ready': [{ path: '/api/health/ready', status: 200, contains: '"migrations":{"status":"ok"', retryForMs: 60_000 }] }
      : {}),
  };
}
