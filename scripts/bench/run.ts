/**
 * npm run bench: the API against a bare floor, on a scale dataset, end to end.
 * See docs/benchmarks.md for what it measures and the figures of the last full run.
 *
 *   npm run bench                      full run (200,000 contracts), writes docs/benchmarks.md
 *   npm run bench -- --smoke           a short run for CI (20,000 contracts, 2 s per measurement)
 *   options: --contracts N --duration S --warmup S --rounds R --only id,id --connections 1,16
 *            --no-build --keep-build --dist-dir DIR --app-dir DIR (build and start the app from a copy) --reseed --no-profile --no-docs --label NAME
 *            --app-build DIR                        start the app from its existing build in DIR (CI's production
 *                                                   build, `.next`) instead of building it into --dist-dir
 *            --admin-url postgres://... --redis-url redis://... --database NAME
 *            --via postgres://user:pass@host:port   the app and the floor reach the database through
 *                                                   this pooler (PgBouncer in transaction mode, in
 *                                                   front of --admin-url's server), DATABASE_PREPARE=false
 *            --no-prepare                           unnamed statements without a pooler (to tell the two apart)
 *            --base-app-dir DIR                     a second copy of the app (main, say) measured in the same
 *                                                   rounds as "base": before/after figures from one run
 *            --profile                              profile a --smoke run too (other runs profile unless --no-profile)
 *            --base-env NAME=VALUE[,NAME=VALUE]     environment of the base app only; without --base-app-dir the
 *                                                   base is the app's own build: `--base-env OBSERVABILITY=off`
 *                                                   measures the app with and without its metrics and logs
 *                                                   side by side (docs/operations.md)
 *
 * Three servers answer every request scenario: the bare floor (floor.ts), the Next.js floor
 * (next-floor/: plain route handlers with the app's key check and rate-limit call) and the
 * app; exports are measured against the bare floor only.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { createWriteStream, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { drizzle } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import type { Database } from '@/db/client';
import * as schema from '@/db/schema';
import { SCALE_CALLERS } from '@/db/seed/scale';
import { hashToken } from '@/server/access/token-format';
import { explain, type ExplainResult } from './explain';
import type { ExportJob, ExportResult, RequestsJob, RequestsResult } from './load';
import { summariseProfile } from './profile';
import { renderDocs, renderTable, evaluateTargets, type Measurement, type BenchReport, type Cell, type ProfiledRun } from './report';
import { scenarios as allScenarios, type Caller, type Scenario } from './scenarios';
import { BENCH_CLIENT_ADDRESS_HEADER, EXPORT_CALLERS, mintKeys, prepareDatabase, prepareExportCallers, type Sql } from './setup';
import { requestStatements, StatementTexts } from './statements';
import { cpuDelta, cpuTimes, machine, sampleRss, treeCpuMs, treeRssBytes } from './system';

const { values: opts } = parseArgs({
  options: {
    smoke: { type: 'boolean', default: false },
    contracts: { type: 'string' },
    duration: { type: 'string' },
    warmup: { type: 'string' },
    rounds: { type: 'string' },
    only: { type: 'string' },
    connections: { type: 'string' },
    'no-build': { type: 'boolean', default: false },
    'keep-build': { type: 'boolean', default: false },
    'dist-dir': { type: 'string', default: '.next-bench' },
    'app-build': { type: 'string' },
    'app-dir': { type: 'string', default: '.' },
    reseed: { type: 'boolean', default: false },
    'no-profile': { type: 'boolean', default: false },
    'no-docs': { type: 'boolean', default: false },
    label: { type: 'string' },
    'admin-url': { type: 'string', default: process.env.BENCH_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres' },
    'redis-url': { type: 'string', default: process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379' },
    database: { type: 'string' },
    via: { type: 'string' },
    'no-prepare': { type: 'boolean', default: false },
    'base-app-dir': { type: 'string' },
    'base-env': { type: 'string' },
    profile: { type: 'boolean', default: false },
  },
  strict: true,
});

const smoke = opts.smoke;
const num = (value: string | undefined, fallback: number) => (value === undefined ? fallback : Number(value));
const config = {
  contracts: num(opts.contracts, smoke ? 20_000 : 200_000),
  duration: num(opts.duration, smoke ? 2 : 8),
  warmup: num(opts.warmup, smoke ? 0 : 3),
  rounds: num(opts.rounds, smoke ? 1 : 2),
  connections: (opts.connections ?? '1,16').split(',').map(Number),
  database: opts.database ?? (smoke ? 'cda_bench_smoke' : 'cda_bench'),
  distDir: opts['dist-dir']!,
  /** The app's own existing build, when given: not built, not removed. */
  appBuild: opts['app-build'],
  appDir: path.resolve(opts['app-dir']!),
  baseAppDir: opts['base-app-dir'] ? path.resolve(opts['base-app-dir']) : opts['base-env'] ? path.resolve(opts['app-dir']!) : undefined,
  baseEnv: parseEnvList(opts['base-env']),
};

/** "A=1,B=2" as { A: '1', B: '2' }. */
function parseEnvList(list: string | undefined): Record<string, string> {
  if (!list) return {};
  return Object.fromEntries(
    list.split(',').map((pair) => {
      const at = pair.indexOf('=');
      if (at < 1) throw new Error(`--base-env takes NAME=VALUE pairs separated by commas, not ${JSON.stringify(pair)}`);
      return [pair.slice(0, at).trim(), pair.slice(at + 1)];
    }),
  );
}
const NEXT_FLOOR_DIR = path.join('scripts', 'bench', 'next-floor');
const fullRun = !smoke && !opts.only && !opts['no-docs'] && config.contracts === 200_000;
const started = Date.now();
const elapsed = () => `${((Date.now() - started) / 1000).toFixed(0).padStart(4)} s`;
const log = (line: string) => console.log(`[bench ${elapsed()}] ${line}`);

const RESULTS_DIR = path.join(process.cwd(), 'bench-results');
mkdirSync(RESULTS_DIR, { recursive: true });
const stamp = new Date().toISOString().replaceAll(':', '-').slice(0, 19);

// Servers ---------------------------------------------------------------------------------

/** floor: the bare node:http floor; next: the Next.js floor; app; base: the app to compare with (--base-app-dir). */
type ServerName = 'floor' | 'next' | 'app' | 'base';
interface Server {
  name: ServerName;
  pid: number;
  port: number;
  child: ChildProcess;
  applicationName: string;
}
const running: Server[] = [];

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
    srv.on('error', reject);
  });
}

async function waitReady(port: number, child: ChildProcess, timeoutMs: number) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode} during start`);
    try {
      const res = await fetch(`http://127.0.0.1:${port}/api/v1/contracts`, { signal: AbortSignal.timeout(5000) });
      await res.arrayBuffer();
      if (res.status === 401) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`server on port ${port} not ready after ${timeoutMs} ms`);
}

async function startServer(
  name: ServerName,
  args: string[],
  env: Record<string, string>,
  port: number,
  applicationName: string,
): Promise<Server> {
  const logFile = path.join(RESULTS_DIR, `${name}-${stamp}.log`);
  const out = createWriteStream(logFile);
  const cwd = name === 'app' ? config.appDir : name === 'base' ? config.baseAppDir! : process.cwd();
  const child = spawn(process.execPath, args, { cwd, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout!.pipe(out);
  child.stderr!.pipe(out);
  const server: Server = { name, pid: child.pid!, port, child, applicationName };
  running.push(server);
  await waitReady(port, child, 90_000);
  return server;
}

async function stopServer(server: Server) {
  const index = running.indexOf(server);
  if (index !== -1) running.splice(index, 1);
  if (server.child.exitCode !== null) return;
  const exited = new Promise((resolve) => server.child.once('exit', resolve));
  server.child.kill('SIGINT');
  const timer = setTimeout(() => server.child.kill('SIGKILL'), 15_000);
  await exited;
  clearTimeout(timer);
}

function stopAllNow() {
  for (const server of running) if (server.child.exitCode === null) server.child.kill('SIGKILL');
}
process.on('SIGINT', () => {
  stopAllNow();
  process.exit(130);
});
process.on('SIGTERM', () => {
  stopAllNow();
  process.exit(143);
});

// Load ------------------------------------------------------------------------------------

function runLoad<T>(job: RequestsJob | ExportJob, timeoutMs: number): Promise<T> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/bench/load.ts', JSON.stringify(job)], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      if (code !== 0) return reject(new Error(`load generator failed (${code}): ${err.slice(0, 2000)}`));
      resolve(JSON.parse(out.trim().split('\n').at(-1)!) as T);
    });
  });
}

async function pgBackendCpu(db: Sql, applicationName: string): Promise<Map<number, number>> {
  const rows = await db`select pid from pg_stat_activity where datname = current_database() and application_name = ${applicationName}`;
  return cpuTimes(rows.map((r) => r.pid as number));
}

interface Fixtures {
  keys: Record<Caller, string>;
  contractId: string;
}

/** Every request of the harness comes "from" 127.0.0.1, told by this header (the app's CLIENT_ADDRESS_HEADER). */
const CLIENT_ADDRESS = { [BENCH_CLIENT_ADDRESS_HEADER]: '127.0.0.1' };

function jobFor(server: Server, scenario: Scenario, fixtures: Fixtures, connections: number, duration: number): RequestsJob | ExportJob {
  const url = `http://127.0.0.1:${server.port}${scenario.path.replace('{contract}', fixtures.contractId)}`;
  const headers = { 'x-api-key': fixtures.keys[scenario.caller], ...CLIENT_ADDRESS };
  return scenario.kind === 'export'
    ? { kind: 'export', url, headers, body: scenario.body ?? '', connections, duration, timeoutSeconds: 180 }
    : { kind: 'requests', url, headers, connections, duration };
}

async function measure(db: Sql, server: Server, scenario: Scenario, fixtures: Fixtures, connections: number, duration: number): Promise<Measurement> {
  const job = jobFor(server, scenario, fixtures, connections, duration);
  const pgBefore = await pgBackendCpu(db, server.applicationName);
  const rssBefore = treeRssBytes(server.pid);
  const cpuBefore = treeCpuMs(server.pid);
  const rss = sampleRss(server.pid);
  const result = await runLoad<RequestsResult | ExportResult>(job, (duration + 240) * 1000);
  const cpuMs = treeCpuMs(server.pid) - cpuBefore;
  const peak = rss.stop();
  const pgCpuMs = cpuDelta(pgBefore, await pgBackendCpu(db, server.applicationName));
  const rssGrowthMiB = Math.max(0, (peak - rssBefore) / 2 ** 20);
  if (result.kind === 'requests') {
    const bad = result.non2xx + result.errors + result.timeouts;
    if (bad > 0) log(`  WARNING ${server.name} ${scenario.id}: ${result.non2xx} non-2xx, ${result.errors} errors, ${result.timeouts} timeouts`);
    const n = Math.max(1, result.requests);
    return {
      requests: result.requests,
      rps: result.rps,
      p50: result.latencyP50,
      p99: result.latencyP99,
      cpuMsPerRequest: cpuMs / n,
      pgCpuMsPerRequest: pgCpuMs / n,
      rssGrowthMiB,
      failures: bad,
    };
  }
  if (result.failed > 0) log(`  WARNING ${server.name} ${scenario.id}: ${result.failed} failed exports`);
  const sorted = [...result.ttfbMs].sort((a, b) => a - b);
  const seconds = [...result.exportSeconds].sort((a, b) => a - b);
  const kRows = Math.max(1, result.rows) / 1000;
  return {
    requests: result.exports,
    rps: result.exports / result.wallSeconds,
    p50: seconds[seconds.length >> 1]! * 1000,
    p99: seconds[seconds.length - 1]! * 1000,
    cpuMsPerRequest: cpuMs / kRows,
    pgCpuMsPerRequest: pgCpuMs / kRows,
    rssGrowthMiB,
    failures: result.failed,
    rows: result.rows,
    rowsPerSecond: result.rowsPerSecond,
    ttfbMs: sorted[sorted.length >> 1]!,
  };
}

// Equivalence -----------------------------------------------------------------------------

const canonical = (value: unknown): unknown =>
  Array.isArray(value)
    ? value.map(canonical)
    : value && typeof value === 'object'
      ? Object.fromEntries(Object.entries(value).sort(([a], [b]) => a.localeCompare(b)).map(([k, v]) => [k, canonical(v)]))
      : value;

async function fetchBody(server: Server, scenario: Scenario, fixtures: Fixtures) {
  const res = await fetch(`http://127.0.0.1:${server.port}${scenario.path.replace('{contract}', fixtures.contractId)}`, {
    method: scenario.method,
    headers: { 'x-api-key': fixtures.keys[scenario.caller], ...CLIENT_ADDRESS, ...(scenario.body !== undefined ? { 'content-type': 'application/json' } : {}) },
    body: scenario.body,
    signal: AbortSignal.timeout(120_000),
  });
  return { status: res.status, text: await res.text() };
}

/** Every floor must give the app's answers, or the comparison means nothing. */
async function checkSameAnswers(floor: Server, app: Server, scenario: Scenario, fixtures: Fixtures) {
  const [a, b] = [await fetchBody(floor, scenario, fixtures), await fetchBody(app, scenario, fixtures)];
  if (a.status !== 200 || b.status !== 200) {
    throw new Error(`${scenario.id}: ${floor.name} answered ${a.status}, ${app.name} ${b.status}: ${(a.status !== 200 ? a : b).text.slice(0, 300)}`);
  }
  const same =
    scenario.kind === 'export'
      ? createHash('sha256').update(a.text).digest('hex') === createHash('sha256').update(b.text).digest('hex')
      : JSON.stringify(canonical(JSON.parse(a.text))) === JSON.stringify(canonical(JSON.parse(b.text)));
  if (!same) throw new Error(`${scenario.id}: the answer of ${floor.name} differs from the ${app.name}'s`);
  return scenario.kind === 'export' ? { rows: a.text.split('\n').length - 2, bytes: a.text.length } : { bytes: a.text.length };
}

// Main ------------------------------------------------------------------------------------

async function main() {
  const box = machine();
  log(`machine: ${box.cpus} CPUs, ${box.cpuModel}, ${box.memoryGiB} GiB, ${box.node}, load ${box.loadAverage.join(' ')}`);
  log(`config: ${JSON.stringify(config)}`);

  // 1. Database, export callers, keys.
  const url = await prepareDatabase({ adminUrl: opts['admin-url']!, name: config.database, contracts: config.contracts, reseed: opts.reseed, log });
  // What the servers connect to: the database directly, or the same database through a pooler.
  const serveUrl = opts.via ? Object.assign(new URL(opts.via), { pathname: `/${config.database}` }).toString() : url;
  const prepareEnv: Record<string, string> = opts.via || opts['no-prepare'] ? { DATABASE_PREPARE: 'false' } : {};
  if (opts.via) log(`servers reach the database through ${new URL(opts.via).host} with unnamed statements`);
  else if (opts['no-prepare']) log('servers use unnamed statements (DATABASE_PREPARE=false)');
  const db = postgres(url, { max: 2, onnotice: () => {}, connection: { application_name: 'cda-bench-harness' } });
  const texts = new StatementTexts(drizzle({ client: db, schema }) as unknown as Database);
  const [{ version: pgVersion }] = (await db`select version()`) as unknown as [{ version: string }];
  const exportTargets = { small: Math.round(config.contracts * 0.05), large: Math.round(config.contracts * 0.5) };
  const exportSizes = await prepareExportCallers(db, exportTargets.small, exportTargets.large);
  await db`vacuum analyze contracts`;
  const emails: Record<Exclude<Caller, 'typical_restricted'>, string> = { ...SCALE_CALLERS, ...EXPORT_CALLERS };
  const scopes = {} as Record<Caller, { userId: string; organizationIds: string[] }>;
  for (const [caller, email] of Object.entries(emails) as [Exclude<Caller, 'typical_restricted'>, string][]) {
    const [user] = await db`select id from users where email = ${email}`;
    // The caller's scope as the app reads it (its memberships statement), never a copy of the rule.
    const memberships = texts.compile(requestStatements.memberships(user!.id as string));
    const orgs = (await db.unsafe(memberships.text, memberships.params as never[])) as unknown as { id: string }[];
    scopes[caller] = { userId: user!.id as string, organizationIds: orgs.map((o) => o.id) };
  }
  // The restricted key sees exactly what the typical caller's unrestricted key sees.
  scopes.typical_restricted = scopes.typical;
  const keys = (await mintKeys(db, url, emails, {
    typical_restricted: {
      email: emails.typical,
      restrictions: ['--access', ['personal', ...scopes.typical.organizationIds].join(','), '--permissions', 'contracts:read', '--allowed-ips', '127.0.0.0/8,::1/128'],
    },
  })) as Record<Caller, string>;
  // The newest of the typical caller's personal contracts: the first row of the list the app
  // would answer for a scope of its personal contracts alone.
  const personalFirst = texts.compile(requestStatements.page({ userId: scopes.typical.userId, organizationIds: [] }, {}, { limit: 1 })!);
  const [newest] = (await db.unsafe(personalFirst.text, personalFirst.params as never[])) as unknown as { id: string }[];
  const fixtures: Fixtures = { keys, contractId: newest!.id as string };
  const [{ n: tableRows }] = (await db`select count(*)::int as n from contracts`) as unknown as [{ n: number }];
  log(`dataset: ${tableRows} contracts; export callers see ${exportSizes.export_small} and ${exportSizes.export_large}`);

  let scenarioList = allScenarios({ small: exportSizes.export_small, large: exportSizes.export_large });
  if (opts.only) {
    const wanted = opts.only.split(',');
    scenarioList = scenarioList.filter((s) => wanted.some((w) => s.id === w || s.id.startsWith(w)));
  }

  // 2. EXPLAIN ANALYZE of every statement, on a quiet machine.
  log('EXPLAIN ANALYZE of the statements...');
  const explains: Record<string, Record<string, ExplainResult>> = {};
  const offsetOf = (s: Scenario) => Number(/offset=(\d+)/.exec(s.path)?.[1] ?? 0);
  const limitOf = (s: Scenario) => Number(/limit=(\d+)/.exec(s.path)?.[1] ?? 50);
  for (const s of scenarioList) {
    const scope = scopes[s.caller];
    const statements: Record<string, ReturnType<StatementTexts['compile']>> = {
      key: texts.compile(requestStatements.keyByHash(hashToken(keys[s.caller]))),
      memberships: texts.compile(requestStatements.memberships(scope.userId)),
    };
    if (s.path.startsWith('/api/v1/contracts?')) {
      statements.page = texts.compile(requestStatements.page(scope, {}, { limit: limitOf(s), offset: offsetOf(s) })!);
      statements.count = texts.compile(requestStatements.count(scope, {})!);
    } else if (s.path.includes('{contract}')) {
      statements.contract = texts.compile(requestStatements.contract(scope, fixtures.contractId));
    } else {
      statements['first page'] = texts.compile(requestStatements.exportPage(scope, {}, { limit: 1000 })!);
      // A page from the middle of the export, after a cursor.
      const middle = (await db.unsafe(
        `select sort_key_text, id from (${statements['first page'].text}) p`,
        statements['first page'].params as never[],
      )) as unknown as { sort_key_text: string | null; id: string }[];
      const last = middle.at(-1);
      if (last) {
        statements['page after cursor'] = texts.compile(
          requestStatements.exportPage(scope, {}, { limit: 1000, after: { key: last.sort_key_text, id: last.id } })!,
        );
      }
    }
    explains[s.id] = {};
    for (const [label, statement] of Object.entries(statements)) explains[s.id]![label] = await explain(db, statement);
  }

  // 3. Build and start the app, the floors (and the base app, if any).
  const build = async (what: string, cwd: string, args: string[] = []) => {
    log(`building ${what} into ${config.distDir} (next build)...`);
    const buildStarted = Date.now();
    // next build adds the build directory's types to tsconfig.json (and reformats it): put it back.
    const tsconfig = path.join(cwd, ...args, 'tsconfig.json');
    const tsconfigText = existsSync(tsconfig) ? readFileSync(tsconfig, 'utf8') : undefined;
    await new Promise<void>((resolve, reject) => {
      const child = spawn(process.execPath, ['node_modules/next/dist/bin/next', 'build', ...args], {
        cwd,
        env: { ...process.env, NEXT_DIST_DIR: config.distDir, NEXT_TELEMETRY_DISABLED: '1' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let output = '';
      child.stdout.on('data', (d: Buffer) => (output += d.toString()));
      child.stderr.on('data', (d: Buffer) => (output += d.toString()));
      child.on('close', (code) => {
        if (tsconfigText !== undefined) writeFileSync(tsconfig, tsconfigText);
        if (code === 0) resolve();
        else reject(new Error(`next build of ${what} failed:\n${output.slice(-4000)}`));
      });
    });
    log(`built ${what} in ${((Date.now() - buildStarted) / 1000).toFixed(0)} s`);
  };
  const builds = [
    { what: 'the app', cwd: config.appDir, args: [] as string[], dist: path.resolve(config.appDir, config.appBuild ?? config.distDir), prebuilt: config.appBuild !== undefined },
    { what: 'the Next.js floor', cwd: process.cwd(), args: [NEXT_FLOOR_DIR], dist: path.join(NEXT_FLOOR_DIR, config.distDir) },
    // The same directory as the app (--base-env alone): one build serves both.
    ...(config.baseAppDir && config.baseAppDir !== config.appDir ? [{ what: 'the base app', cwd: config.baseAppDir, args: [] as string[], dist: path.join(config.baseAppDir, config.distDir) }] : []),
  ];
  for (const b of builds as { what: string; cwd: string; args: string[]; dist: string; prebuilt?: boolean }[]) {
    if (!opts['no-build'] && !b.prebuilt) await build(b.what, b.cwd, b.args);
    else if (b.prebuilt && !existsSync(path.join(b.dist, 'BUILD_ID'))) throw new Error(`--app-build: no build of ${b.what} in ${b.dist}`);
    else if (!existsSync(path.join(b.dist, 'BUILD_ID'))) throw new Error(`--no-build: no build of ${b.what} in ${b.dist}`);
  }

  const appEnv = (port: number, distDir = config.distDir): Record<string, string> => ({
    NODE_ENV: 'production',
    NEXT_DIST_DIR: distDir,
    NEXT_TELEMETRY_DISABLED: '1',
    DATABASE_URL: serveUrl,
    ...prepareEnv,
    REDIS_URL: opts['redis-url']!,
    AUTH_SECRET: randomBytes(32).toString('base64'),
    AUTH_TRUST_HOST: 'true',
    // Production refuses to start without a way to send mail; the bench sends none.
    MAIL_TRANSPORT: 'log',
    // Raised through configuration for the run; the limits stay enforced (Redis is asked on every request).
    RATE_LIMIT_GENERAL_PER_WINDOW: '1000000000',
    RATE_LIMIT_EXPORT_PER_WINDOW: '1000000',
    // The client address as a proxy would hand it over (every request of the harness sends
    // it): what a key's allowed addresses are checked against.
    CLIENT_ADDRESS_HEADER: BENCH_CLIENT_ADDRESS_HEADER,
    // Metrics are recorded as in production (only with a token); never scraped during a run.
    METRICS_TOKEN: randomBytes(32).toString('base64url'),
    PORT: String(port),
  });
  // The app, the base app and the Next.js floor are started alike (next start, the same
  // environment). Postgres CPU is summed over the backends of an application_name; the app
  // and the base app share theirs, which is harmless: one's backends idle while the other is measured.
  // The app's build, also the base app's when the base is the same directory (--base-env alone).
  const sameBase = config.baseAppDir === config.appDir;
  const distDirOf = (name: 'app' | 'base' | 'next') => (name === 'app' || (name === 'base' && sameBase) ? (config.appBuild ?? config.distDir) : config.distDir);
  const startNext = async (name: 'app' | 'base' | 'next', extraNodeArgs: string[] = []) => {
    const port = await freePort();
    return startServer(
      name,
      [...extraNodeArgs, 'node_modules/next/dist/bin/next', 'start', ...(name === 'next' ? [NEXT_FLOOR_DIR] : []), '-H', '127.0.0.1', '-p', String(port)],
      { ...appEnv(port, distDirOf(name)), ...(name === 'base' ? config.baseEnv : {}) },
      port,
      name === 'next' ? 'cda-bench-next-floor' : 'contract-data-api',
    );
  };
  const startApp = (extraNodeArgs: string[] = []) => startNext('app', extraNodeArgs);
  const floorPort = await freePort();
  const floor = await startServer('floor', ['--conditions=react-server', '--import', 'tsx', 'scripts/bench/floor.ts'], { DATABASE_URL: serveUrl, ...prepareEnv, FLOOR_PORT: String(floorPort) }, floorPort, 'cda-bench-floor');
  let nextFloor = await startNext('next');
  const base = config.baseAppDir ? await startNext('base') : undefined;
  let app = await startApp();
  log(`floor pid ${floor.pid} on :${floor.port}, Next.js floor pid ${nextFloor.pid} on :${nextFloor.port}, app pid ${app.pid} on :${app.port}${base ? `, base app pid ${base.pid} on :${base.port}` : ''}`);

  // 4. Same answers from all, then the measurements: for each scenario and connection
  //    count, a warm-up of each, then rounds of floor, Next.js floor, (base,) app (A B C A B C ...).
  //    The Next.js floor serves the JSON requests only; exports are held against the bare floor.
  const cells: Cell[] = [];
  for (const s of scenarioList) {
    const servers = [floor, ...(s.kind === 'requests' ? [nextFloor] : []), ...(base ? [base] : []), app];
    for (const other of servers.filter((x) => x !== app)) {
      const check = await checkSameAnswers(other, app, s, fixtures);
      log(`${s.id}: ${other.name} and app give the same answer (${check.bytes} bytes${'rows' in check ? `, ${check.rows} rows` : ''})`);
    }
    for (const connections of config.connections) {
      // Warm-up (not recorded); an export warms up with one export, at one connection only.
      if ((s.kind === 'requests' && config.warmup > 0) || (s.kind === 'export' && connections === 1)) {
        const warm = s.kind === 'export' ? 0 : config.warmup;
        for (const server of servers) await runLoad(jobFor(server, s, fixtures, s.kind === 'export' ? 1 : connections, warm), (warm + 240) * 1000);
      }
      const rounds: Cell['rounds'] = [];
      for (let r = 0; r < config.rounds; r++) {
        const round: Partial<Cell['rounds'][number]> = {};
        for (const server of servers) round[server.name] = await measure(db, server, s, fixtures, connections, config.duration);
        rounds.push(round as Cell['rounds'][number]);
      }
      const cell: Cell = { scenario: s.id, title: s.title, kind: s.kind, connections, rounds };
      cells.push(cell);
      const last = rounds.at(-1)!;
      log(
        `${s.id} x${connections}: floor ${last.floor.rps.toFixed(1)}/s${last.next ? `, Next.js floor ${last.next.rps.toFixed(1)}/s` : ''}` +
          `${last.base ? `, base ${last.base.rps.toFixed(1)}/s` : ''}, app ${last.app.rps.toFixed(1)}/s` +
          (s.kind === 'export' ? `, app ${Math.round(last.app.rowsPerSecond ?? 0)} rows/s` : `, app p50 ${last.app.p50} ms`),
      );
    }
  }

  // 5. Where the CPU goes: the request paths (typical list and get-one, 16 connections; the
  //    list in the Next.js floor too, to tell the framework's share from the app's) and the
  //    largest export (1 connection), each in a fresh server under node --cpu-prof; only the
  //    samples of the measured window are summarised (not start-up, not warm-up).
  const profiles: ProfiledRun[] = [];
  if (!opts['no-profile'] && (!smoke || opts.profile)) {
    const largest = scenarioList.filter((s) => s.kind === 'export').at(-1);
    const list = scenarioList.find((s) => s.id === 'list-typical-50');
    const targets = [
      { server: 'app' as const, scenario: list, connections: 16 },
      { server: 'next' as const, scenario: list, connections: 16 },
      { server: 'app' as const, scenario: scenarioList.find((s) => s.id === 'get-one'), connections: 16 },
      { server: 'app' as const, scenario: largest, connections: 1 },
    ].filter((t): t is { server: 'app' | 'next'; scenario: Scenario; connections: number } => t.scenario !== undefined);
    for (const [i, target] of targets.entries()) {
      const who = target.server === 'app' ? 'the app' : 'the Next.js floor';
      const dir = path.join(RESULTS_DIR, `profile-${stamp}-${i}`);
      rmSync(dir, { recursive: true, force: true });
      log(`profiling ${who} on ${target.scenario.id} x${target.connections} (node --cpu-prof)...`);
      await stopServer(target.server === 'app' ? app : nextFloor);
      const profiled = await startNext(target.server, ['--cpu-prof', `--cpu-prof-dir=${dir}`]);
      if (target.server === 'app') app = profiled;
      else nextFloor = profiled;
      const warm = target.scenario.kind === 'export' ? 0 : config.warmup;
      if (warm > 0 || target.scenario.kind === 'export') {
        await runLoad(jobFor(profiled, target.scenario, fixtures, target.connections, warm), (warm + 240) * 1000);
      }
      const nowUs = () => Number(process.hrtime.bigint() / 1000n);
      const cpuBefore = treeCpuMs(profiled.pid);
      const startUs = nowUs();
      const load = await runLoad<RequestsResult | ExportResult>(
        jobFor(profiled, target.scenario, fixtures, target.connections, config.duration),
        (config.duration + 240) * 1000,
      );
      const endUs = nowUs();
      const cpuMs = treeCpuMs(profiled.pid) - cpuBefore;
      await stopServer(profiled);
      const file = existsSync(dir) ? readdirSync(dir).find((f) => f.endsWith('.cpuprofile')) : undefined;
      if (!file) {
        log('no profile was written');
        continue;
      }
      const what =
        load.kind === 'export'
          ? `${Math.round(load.rowsPerSecond)} rows/s, ${((cpuMs / Math.max(1, load.rows)) * 1000).toFixed(1)} ms CPU per 1,000 rows while profiled`
          : `${Math.round(load.rps)} req/s, ${(cpuMs / Math.max(1, load.requests)).toFixed(2)} ms CPU per request while profiled`;
      profiles.push({
        ...summariseProfile(path.join(dir, file), { startUs, endUs }),
        server: who,
        scenario: `${target.scenario.id} x${target.connections}, ${what}`,
        unit: load.kind === 'export' ? { label: '1,000 rows', count: load.rows / 1000 } : { label: 'request', count: load.requests },
      });
    }
  }

  await Promise.all([...running].map(stopServer));
  await db.end();
  // The build is removed unless asked to keep it (--keep-build, for a later --no-build run):
  // ESLint's configuration ignores .next/ but not other build directories.
  if (!opts['no-build'] && !opts['keep-build']) for (const b of builds) if (!('prebuilt' in b && b.prebuilt)) rmSync(b.dist, { recursive: true, force: true });

  // 6. Report.
  const report: BenchReport = {
    label: opts.label,
    date: new Date().toISOString(),
    smoke,
    config,
    machine: { ...box, postgres: pgVersion, loadAverageAtEnd: machine().loadAverage },
    dataset: { contracts: tableRows, exportRows: exportSizes },
    explains,
    cells,
    profiles,
    durationSeconds: Math.round((Date.now() - started) / 1000),
  };
  report.targets = evaluateTargets(report);
  const file = path.join(RESULTS_DIR, `bench-${stamp}${opts.label ? `-${opts.label}` : ''}${smoke ? '-smoke' : ''}.json`);
  writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
  console.log(`\n${renderTable(report)}`);
  log(`results: ${path.relative(process.cwd(), file)}`);
  if (fullRun) {
    const docs = path.join(process.cwd(), 'docs', 'benchmarks.md');
    writeFileSync(docs, renderDocs(existsSync(docs) ? readFileSync(docs, 'utf8') : '', report, path.relative(process.cwd(), file)));
    log('docs/benchmarks.md updated');
  }
  const failed = cells.some((c) => c.rounds.some((r) => r.app.failures > 0 || r.floor.failures > 0));
  if (failed) {
    log('some requests failed: see the warnings above');
    process.exitCode = 1;
  }
  log(`done in ${report.durationSeconds} s`);
}

main().then(() => process.exit(process.exitCode ?? 0)).catch((error: unknown) => {
  console.error(error instanceof Error ? (error.stack ?? error.message) : error);
  stopAllNow();
  process.exit(1);
});
