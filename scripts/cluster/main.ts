import { parseArgs } from 'node:util';
import { runScript, UsageError } from '../run-script';
import { down, env, printUp, status, up } from './cluster';

const USAGE = `Usage: npm run cluster [-- up] [--rebuild] [--dist-dir DIR]
       npm run cluster -- down [--purge]
       npm run cluster -- status
       npm run cluster -- env        (shell lines with the URLs: eval "$(npm run -s cluster -- env)")

  up        start what is not running: Postgres primary and streaming replica, PgBouncer
            (transaction mode), Redis, three \`next start\` instances and HAProxy (default)
  down      stop what \`up\` started, by its pid files; --purge also deletes the data
  status    what runs where, and each instance's readiness (GET /api/health/ready)

  --rebuild        build the app again (into .next-cluster) even if a build exists
  --dist-dir DIR   run the build in DIR instead (e.g. .next after npm run build)

State in .data/cluster (CLUSTER_DIR). Ports: CLUSTER_HTTP_PORT (3300; instances on the
next three), CLUSTER_PG_PORT (5440; replica on the next), CLUSTER_PGBOUNCER_PORT (6432),
CLUSTER_REDIS_PORT (6390). RATE_LIMIT_*, DATABASE_POOL_MAX, DATABASE_STATEMENT_TIMEOUT_MS
and REQUEST_DEADLINE_MS set for \`up\` are passed on to the instances.`;

runScript(async () => {
  let parsed;
  try {
    parsed = parseArgs({
      allowPositionals: true,
      options: {
        rebuild: { type: 'boolean', default: false },
        'dist-dir': { type: 'string' },
        purge: { type: 'boolean', default: false },
        help: { type: 'boolean', default: false },
      },
      strict: true,
    });
  } catch (error) {
    throw new UsageError(`${(error as Error).message}\n${USAGE}`);
  }
  const { values, positionals } = parsed;
  const command = positionals[0] ?? 'up';
  if (values.help) {
    console.log(USAGE);
    return;
  }
  if (positionals.length > 1 || !['up', 'down', 'status', 'env'].includes(command)) throw new UsageError(USAGE);
  if (command !== 'up' && (values.rebuild || values['dist-dir'])) throw new UsageError(`--rebuild and --dist-dir are options of up\n${USAGE}`);
  if (command !== 'down' && values.purge) throw new UsageError(`--purge is an option of down\n${USAGE}`);

  if (command === 'up') {
    const { state, seconds } = await up({ rebuild: values.rebuild, distDir: values['dist-dir'] });
    printUp(state, seconds);
  } else if (command === 'down') {
    await down({ purge: values.purge });
  } else if (command === 'status') {
    if (!(await status())) process.exitCode = 3;
  } else {
    env();
  }
});
