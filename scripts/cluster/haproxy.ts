import { mkdirSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { balancerUrl, paths, type State } from './layout';
import { instanceNumbers, instancePort } from './instances';
import type { Programs } from './packages';
import { ourPid, portOpen, run, stopPid, waitUntil } from './processes';

/**
 * HAProxy, round robin over the instances on the one public port.
 *
 * - `option forwardfor` appends the address the client connected from to
 *   X-Forwarded-For; the instances read it with TRUSTED_PROXY_HOPS=1.
 * - Health checks every second on the instance's readiness (`/api/health/ready`: its
 *   database, migrations, Redis; docs/operations.md); an instance is out after two
 *   failures, back after two successes.
 * - When no instance is ready, a part they all share is down (the database, Redis): rather
 *   than answer every request with its own 503, HAProxy then sends them to the instances
 *   that are alive (`/api/health`, backend `app_live`). They serve what they can: without
 *   Redis every request (rate limits fail open), without the database a 503 of their own
 *   with Retry-After. An instance that is dead (killed, hung) is out of both.
 * - A request whose instance refused the connection or closed it without answering (killed
 *   mid-request) is sent again to another instance: the API is read-only, so a repeat is
 *   safe (it may count twice against the caller's limit).
 * - `X-Served-By` (the instance's name) exists only here, for the tests to see where each
 *   request went; the app knows nothing of it.
 * - HAProxy's own errors (no instance left) answer in the API's error envelope, with
 *   `Retry-After` on 503.
 */

const config = (s: State) => path.join(paths(s).haproxyDir, 'haproxy.cfg');
const pidFile = (s: State) => path.join(paths(s).haproxyDir, 'haproxy.pid');
export const haproxySocket = (s: State) => path.join(paths(s).haproxyDir, 'haproxy.sock');

export const haproxyPid = (s: State) => ourPid(pidFile(s), ['haproxy', config(s)]);

const envelope = (code: string, message: string) =>
  `'{"success":false,"error":{"code":"${code}","message":"${message}","details":[]},"request_id":"%[unique-id]"}'`;

/** A backend over every instance, checked on `checkPath`. */
function backend(s: State, name: string, checkPath: string): string {
  const servers = instanceNumbers(s)
    .map((n) => `  server app${n} 127.0.0.1:${instancePort(s, n)}`)
    .join('\n');
  return `backend ${name}
  balance roundrobin
  option httpchk
  http-check send meth GET uri ${checkPath}
  http-check expect status 200
  default-server check inter 1s fall 2 rise 2
${servers}
  http-response set-header X-Served-By %s
  http-error status 503 content-type application/json lf-string ${envelope('service_unavailable', 'No instance of the API is available. Try again shortly.')} hdr Retry-After 5 hdr X-Request-Id %[unique-id]
  http-error status 502 content-type application/json lf-string ${envelope('service_unavailable', 'The instance serving this request failed. Try again.')} hdr Retry-After 1 hdr X-Request-Id %[unique-id]
  http-error status 504 content-type application/json lf-string ${envelope('service_unavailable', 'The request took too long. Try again shortly.')} hdr Retry-After 5 hdr X-Request-Id %[unique-id]
`;
}

/** The backend of the ready instances, and of the live ones when none is ready. */
export const READY_BACKEND = 'app';
export const LIVE_BACKEND = 'app_live';

function cfg(s: State): string {
  return `# Written by scripts/cluster (npm run cluster).
global
  maxconn 4096
  stats socket ${haproxySocket(s)} mode 600 level admin

defaults
  mode http
  timeout connect 2s
  timeout client 60s
  timeout server 60s
  timeout http-request 10s
  timeout http-keep-alive 10s
  timeout queue 10s
  retries 3
  option redispatch 1
  retry-on conn-failure empty-response response-timeout
  unique-id-format %[uuid()]

frontend public
  bind 127.0.0.1:${s.ports.balancer}
  option forwardfor
  # No instance ready (the database or Redis down for all): the live ones answer instead.
  use_backend ${LIVE_BACKEND} if { nbsrv(${READY_BACKEND}) lt 1 }
  default_backend ${READY_BACKEND}

${backend(s, READY_BACKEND, '/api/health/ready')}
${backend(s, LIVE_BACKEND, '/api/health')}`;
}

export async function ensureHaproxy(s: State, programs: Programs, log: (line: string) => void): Promise<void> {
  mkdirSync(paths(s).haproxyDir, { recursive: true, mode: 0o700 });
  writeFileSync(config(s), cfg(s));
  if (haproxyPid(s) !== undefined) return;
  if (await portOpen(s.ports.balancer)) throw new Error(`port ${s.ports.balancer} (the balancer) is taken by another program: set CLUSTER_HTTP_PORT`);
  run(programs.haproxy, ['-c', '-q', '-f', config(s)]);
  log(`starting HAProxy on ${balancerUrl(s)} (round robin over ${s.ports.instances.length} instances)…`);
  run(programs.haproxy, ['-D', '-p', pidFile(s), '-f', config(s)]);
  await waitUntil(() => portOpen(s.ports.balancer), 15_000, 'HAProxy did not start');
}

export async function stopHaproxy(s: State): Promise<boolean> {
  const pid = haproxyPid(s);
  if (pid === undefined) return false;
  // SIGUSR1: soft stop, the requests in progress are finished first.
  await stopPid(pid, { signal: 'SIGUSR1', graceMs: 10_000 });
  return true;
}

/** One command on HAProxy's admin socket (`show stat`, `show servers state`, …). */
export function haproxyCommand(s: State, command: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(haproxySocket(s));
    let out = '';
    socket.setTimeout(3_000, () => socket.destroy(new Error('HAProxy admin socket: no answer')));
    socket.on('connect', () => socket.write(`${command}\n`));
    socket.on('data', (chunk) => (out += chunk.toString('utf8')));
    socket.on('end', () => resolve(out));
    socket.on('error', reject);
  });
}

export interface ServerStat {
  name: string;
  status: string;
  /** Requests (sessions) in progress on it now. */
  current: number;
  /** Requests sent to it in all. */
  total: number;
  /** Connection retries and redispatches to another server. */
  retries: number;
  redispatches: number;
}

/** A backend's servers as HAProxy sees them (`show stat`): the ready instances' by default. */
export async function serverStats(s: State, backendName: string = READY_BACKEND): Promise<ServerStat[]> {
  const [header, ...rows] = (await haproxyCommand(s, 'show stat')).replace(/^# /, '').trim().split('\n');
  const names = header!.split(',');
  const col = (row: string[], name: string) => row[names.indexOf(name)] ?? '';
  return rows
    .map((line) => line.split(','))
    .filter((row) => col(row, 'pxname') === backendName && /^app\d+$/.test(col(row, 'svname')))
    .map((row) => ({
      name: col(row, 'svname'),
      status: col(row, 'status'),
      current: Number(col(row, 'scur')),
      total: Number(col(row, 'stot')),
      retries: Number(col(row, 'wretr')),
      redispatches: Number(col(row, 'wredis')),
    }));
}
