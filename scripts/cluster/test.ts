import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { runScript, UsageError } from '../run-script';
import { down, isUp, log, up } from './cluster';
import { PROJECT_ROOT } from './instances';
import { balancerUrl, databaseUrl, readState, redisUrl, secrets } from './layout';

const USAGE = `Usage: npm run test:cluster -- [--short] [--suite] [--keep] [--dist-dir DIR]

Starts the local cluster if none runs (npm run cluster), then:
  1. the cluster tests (tests/cluster/, vitest.cluster.config.ts) over HTTP through its balancer;
  2. the soak pointed at the balancer with the cluster's faults (an instance killed with
     SIGKILL and restarted, the read replica stopped and started, Redis restarted):
     60 s, or 20 s with --short (CI);
  3. with --suite, the whole vitest suite through PgBouncer (DATABASE_PREPARE=false).
Then stops the cluster if it started it (--keep leaves it running).
  --dist-dir DIR   for a cluster it starts: run the build in DIR (e.g. CI's .next)`;

const TSX = path.join(PROJECT_ROOT, 'node_modules', 'tsx', 'dist', 'cli.mjs');
const VITEST = path.join(PROJECT_ROOT, 'node_modules', 'vitest', 'vitest.mjs');

function step(name: string, command: string[], env: NodeJS.ProcessEnv = process.env): boolean {
  log(`${name}…`);
  const started = Date.now();
  const result = spawnSync(process.execPath, command, { cwd: PROJECT_ROOT, stdio: 'inherit', env });
  const ok = result.status === 0;
  log(`${name}: ${ok ? 'passed' : `FAILED (exit ${result.status ?? result.signal})`} in ${Math.round((Date.now() - started) / 1000)} s`);
  return ok;
}

runScript(async () => {
  let values;
  try {
    ({ values } = parseArgs({
      options: {
        short: { type: 'boolean', default: false },
        suite: { type: 'boolean', default: false },
        keep: { type: 'boolean', default: false },
        'dist-dir': { type: 'string' },
        help: { type: 'boolean', default: false },
      },
      strict: true,
    }));
  } catch (error) {
    throw new UsageError(`${(error as Error).message}\n${USAGE}`);
  }
  if (values.help) {
    console.log(USAGE);
    return;
  }

  const started = Date.now();
  const startedHere = !isUp();
  const failed: string[] = [];
  try {
    // Inside the try: a start that fails halfway still stops what it had started.
    if (startedHere) {
      const { seconds } = await up({ distDir: values['dist-dir'] });
      log(`cluster up in ${seconds.toFixed(0)} s`);
    } else {
      log('using the running cluster');
    }
    const s = readState()!;
    const sec = secrets(s.dir);
    if (!step('cluster tests (vitest.cluster.config.ts)', [VITEST, 'run', '--config', 'vitest.cluster.config.ts'])) failed.push('cluster tests');

    const duration = values.short ? 20 : 60;
    const soakEnv = { ...process.env, DATABASE_URL: databaseUrl(s, sec, { through: 'primary' }) };
    const soak = [TSX, '--conditions=react-server', 'scripts/soak.ts', '--url', balancerUrl(s), '--faults', '--duration', String(duration), '--warmup', values.short ? '5' : '15'];
    if (!step(`soak with faults through the balancer (${duration} s)`, soak, soakEnv)) failed.push('soak with faults');

    if (values.suite) {
      const suiteEnv = { ...process.env, DATABASE_URL: databaseUrl(s, sec), DATABASE_PREPARE: 'false', REDIS_URL: redisUrl(s, sec) };
      if (!step('the whole vitest suite through PgBouncer', [VITEST, 'run'], suiteEnv)) failed.push('vitest suite through PgBouncer');
    }
  } finally {
    if (startedHere && !values.keep) await down();
  }
  log(`${failed.length === 0 ? 'PASS' : `FAILED: ${failed.join(', ')}`} in ${Math.round((Date.now() - started) / 1000)} s`);
  if (failed.length > 0) process.exitCode = 1;
});
