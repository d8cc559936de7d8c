import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync, chmodSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { DEBIAN_DEFAULT_INI, onDebianDefaults } from '@/scripts/cluster/pgbouncer';

/**
 * A stock PgBouncer (Debian 12's package, 1.18) that a test starts for itself: Debian's
 * default /etc/pgbouncer/pgbouncer.ini with only the listen address and port, the
 * authentication and pool_mode = transaction changed (plus where its own files go: its
 * log, pid file and socket directory, so that it leaves the machine's alone). Above all,
 * no `ignore_startup_parameters`: it refuses every startup parameter it does not track,
 * as Neon's and DigitalOcean's managed poolers do.
 */

/** The ports these tests may use (one instance at a time per port). */
const PORTS = [6610, 6611, 6612, 6613, 6614, 6615, 6616, 6617, 6618, 6619];

/** The pgbouncer program, or undefined when the package is not installed. */
export function pgbouncerProgram(): string | undefined {
  return ['/usr/sbin/pgbouncer', '/usr/bin/pgbouncer'].find((p) => existsSync(p));
}

/** Why a test of the stock PgBouncer cannot run here, or undefined when it can. */
export function pgbouncerMissing(): string | undefined {
  if (!pgbouncerProgram()) return 'needs the pgbouncer package (apt-get install -y pgbouncer; .ci/run installs it)';
  if (!existsSync(DEBIAN_DEFAULT_INI)) return `needs Debian's default ${DEBIAN_DEFAULT_INI} (the pgbouncer package)`;
  return undefined;
}

export interface StockPgbouncer {
  port: number;
  /** The configuration it runs with, for the record. */
  ini: string;
  /** What it logged (refused startup parameters show there). */
  log(): string;
  stop(): Promise<void>;
}

function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** The `postgres` user's ids when running as root (PgBouncer refuses to run as root). */
function runAs(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const id = (flag: string) => Number(spawnSync('id', [flag, 'postgres'], { encoding: 'utf8' }).stdout.trim());
  return { uid: id('-u'), gid: id('-g') };
}

/**
 * Starts PgBouncer in transaction mode in front of the Postgres on `serverPort`, with
 * trust authentication for `users` (the local Postgres trusts 127.0.0.1 too).
 */
export async function startStockPgbouncer(serverPort: number, users: string[]): Promise<StockPgbouncer> {
  const program = pgbouncerProgram();
  if (!program) throw new Error(pgbouncerMissing());
  let port: number | undefined;
  for (const candidate of PORTS) {
    if (await portFree(candidate)) {
      port = candidate;
      break;
    }
  }
  if (port === undefined) throw new Error(`ports ${PORTS[0]}-${PORTS.at(-1)} are all taken`);
  const dir = mkdtempSync(path.join(os.tmpdir(), 'cda-pgbouncer-'));
  const owner = runAs();
  chmodSync(dir, 0o755);
  const file = (name: string, content?: string) => {
    const p = path.join(dir, name);
    if (content !== undefined) writeFileSync(p, content);
    if (owner) chownSync(p, owner.uid, owner.gid);
    return p;
  };
  if (owner) chownSync(dir, owner.uid, owner.gid);
  const authFile = file('userlist.txt', users.map((u) => `"${u}" ""\n`).join(''));
  const ini = onDebianDefaults(
    readFileSync(DEBIAN_DEFAULT_INI, 'utf8'),
    {
      // Ours: where it listens, who may connect, how it pools.
      listen_addr: '127.0.0.1',
      listen_port: String(port),
      auth_type: 'trust',
      auth_file: authFile,
      pool_mode: 'transaction',
      // Its own files, not the machine's PgBouncer's.
      logfile: path.join(dir, 'pgbouncer.log'),
      pidfile: path.join(dir, 'pgbouncer.pid'),
      unix_socket_dir: dir,
    },
    // Every database name pooled on the server under that name.
    [`* = host=127.0.0.1 port=${serverPort}`],
  );
  const iniFile = file('pgbouncer.ini', ini);
  file('pgbouncer.log', '');
  const child: ChildProcess = spawn(program, [iniFile], { stdio: 'ignore', ...(owner ?? {}) });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const log = () => {
    try {
      return readFileSync(path.join(dir, 'pgbouncer.log'), 'utf8');
    } catch {
      return '';
    }
  };
  const deadline = Date.now() + 10_000;
  while (!(await portOpen(port))) {
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`PgBouncer did not start on port ${port}:\n${log().slice(-2000)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    port,
    ini,
    log,
    async stop() {
      if (child.exitCode === null) {
        child.kill('SIGTERM');
        await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 5_000))]);
        if (child.exitCode === null) child.kill('SIGKILL');
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
