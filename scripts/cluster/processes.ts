import { spawnSync, type SpawnSyncOptions } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import net from 'node:net';

/**
 * Processes of the cluster, known only by their pid files. A pid counts as ours when the
 * process's command line still names what we started (its config file, data directory or
 * port): a pid file left behind after a crash can point at an unrelated process that got
 * the same number, and that one must never be signalled.
 */

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export const isRoot = () => process.getuid?.() === 0;

/** `postgres` and `pgbouncer` refuse to run as root: as root, they run as the `postgres` user. */
export function asPostgresUser(command: string, args: string[]): [string, string[]] {
  return isRoot() ? ['runuser', ['-u', 'postgres', '--', command, ...args]] : [command, args];
}

export class CommandError extends Error {}

/** Runs a command to completion; throws with its output when it fails. */
export function run(command: string, args: string[], options: SpawnSyncOptions & { postgresUser?: boolean } = {}): string {
  const [cmd, argv] = options.postgresUser ? asPostgresUser(command, args) : [command, args];
  const result = spawnSync(cmd, argv, { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024, ...options });
  if (result.error) throw new CommandError(`${command}: ${result.error.message}`);
  if (result.status !== 0) {
    const output = `${result.stdout ?? ''}${result.stderr ?? ''}`.trim();
    throw new CommandError(`${command} ${args.join(' ')} failed (exit ${result.status ?? result.signal}):\n${output.slice(-3000)}`);
  }
  return String(result.stdout ?? '');
}

export function readPid(file: string): number | undefined {
  if (!existsSync(file)) return undefined;
  const pid = Number(readFileSync(file, 'utf8').split('\n')[0]!.trim());
  return Number.isInteger(pid) && pid > 0 ? pid : undefined;
}

/** The command line of a live process (not a zombie), or undefined. */
export function commandLine(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    if (stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z')) return undefined;
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim();
  } catch {
    return undefined;
  }
}

/** The pid in `file` when that process is alive and its command line contains every marker. */
export function ourPid(file: string, markers: string[]): number | undefined {
  const pid = readPid(file);
  if (pid === undefined) return undefined;
  const cmd = commandLine(pid);
  return cmd !== undefined && markers.every((m) => cmd.includes(m)) ? pid : undefined;
}

export function alive(pid: number): boolean {
  return commandLine(pid) !== undefined;
}

/**
 * Stops a process of ours: `signal`, then SIGKILL if it is still there after `graceMs`.
 * With `group`, the whole process group (the instances are group leaders).
 */
export async function stopPid(pid: number, options: { signal?: NodeJS.Signals; graceMs?: number; group?: boolean } = {}): Promise<void> {
  const target = options.group ? -pid : pid;
  try {
    process.kill(target, options.signal ?? 'SIGTERM');
  } catch {
    return;
  }
  const until = Date.now() + (options.graceMs ?? 15_000);
  while (alive(pid) && Date.now() < until) await sleep(100);
  if (alive(pid)) {
    try {
      process.kill(target, 'SIGKILL');
    } catch {
      /* gone meanwhile */
    }
    for (let i = 0; i < 50 && alive(pid); i++) await sleep(100);
  }
}

/** Whether something accepts TCP connections on 127.0.0.1:port. */
export function portOpen(port: number, timeoutMs = 1000): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    const done = (open: boolean) => {
      socket.destroy();
      resolve(open);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

/** Polls `check` until it is true; throws `message` (with `details()`) after `timeoutMs`. */
export async function waitUntil(check: () => Promise<boolean> | boolean, timeoutMs: number, message: string, details?: () => string): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > until) throw new Error(`${message}${details ? `\n${details()}` : ''}`);
    await sleep(200);
  }
}

/** The last lines of a log file, for an error message. */
export function tail(file: string, lines = 30): string {
  try {
    return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return `(no log at ${file})`;
  }
}

/**
 * When the process started (clock ticks since boot, /proc/<pid>/stat field 22). With the
 * pid, it names one process for good: a recycled pid has another start time. Used for
 * processes that rewrite their own command line (`next start` becomes "next-server").
 */
export function startTime(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return fields[0] === 'Z' ? undefined : fields[19];
  } catch {
    return undefined;
  }
}
