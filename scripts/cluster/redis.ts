import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { paths, type Secrets, type State } from './layout';
import type { Programs } from './packages';
import { ourPid, portOpen, run, stopPid, tail, waitUntil } from './processes';

/**
 * The cluster's own Redis for the rate-limit counters: its own port and directory, no
 * persistence (a restart empties the counters, as a failover to an empty replica would),
 * a password, loopback only. The settings are in a file so that the password is not on
 * the command line.
 */

const config = (s: State) => path.join(paths(s).redisDir, 'redis.conf');
const pidFile = (s: State) => path.join(paths(s).redisDir, 'redis.pid');
export const redisLog = (s: State) => path.join(paths(s).redisDir, 'redis.log');

// redis-server rewrites its process title to "redis-server 127.0.0.1:<port>".
export const redisPid = (s: State) => ourPid(pidFile(s), ['redis-server', `:${s.ports.redis}`]);

export async function startRedis(s: State, sec: Secrets, programs: Programs): Promise<void> {
  const dir = paths(s).redisDir;
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  writeFileSync(
    config(s),
    [
      '# Written by scripts/cluster (npm run cluster).',
      'bind 127.0.0.1',
      `port ${s.ports.redis}`,
      `requirepass ${sec.redisPassword}`,
      'save ""',
      'appendonly no',
      'daemonize yes',
      `pidfile ${pidFile(s)}`,
      `logfile ${redisLog(s)}`,
      `dir ${dir}`,
      '',
    ].join('\n'),
    { mode: 0o600 },
  );
  run(programs.redisServer, [config(s)]);
  await waitUntil(() => portOpen(s.ports.redis), 15_000, 'Redis did not start', () => tail(redisLog(s)));
}

export async function ensureRedis(s: State, sec: Secrets, programs: Programs, log: (line: string) => void): Promise<void> {
  if (redisPid(s) !== undefined) return;
  if (await portOpen(s.ports.redis)) throw new Error(`port ${s.ports.redis} (Redis) is taken by another program: set CLUSTER_REDIS_PORT`);
  log(`starting Redis on port ${s.ports.redis} (no persistence)…`);
  await startRedis(s, sec, programs);
}

export async function stopRedis(s: State): Promise<boolean> {
  const pid = redisPid(s);
  if (pid === undefined) return false;
  await stopPid(pid, { signal: 'SIGTERM', graceMs: 10_000 });
  return true;
}
