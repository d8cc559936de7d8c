import { execFile } from 'node:child_process';
import { randomInt } from 'node:crypto';
import http from 'node:http';
import path from 'node:path';
import { promisify } from 'node:util';
import { haproxyPid } from '@/scripts/cluster/haproxy';
import { balancerUrl, databaseUrl, readState, redisUrl, secrets, stateDir, type Secrets, type State } from '@/scripts/cluster/layout';

/**
 * The running local cluster (npm run cluster) as the tests see it: its state, real HTTP
 * through the balancer, and API keys minted with `npm run apikey` on its primary.
 */

export interface Cluster {
  state: State;
  secrets: Secrets;
  base: string;
  /** The primary directly, as `npm run apikey` and `db:seed` use it. */
  primaryUrl: string;
}

export function cluster(): Cluster {
  const state = readState();
  if (!state || haproxyPid(state) === undefined) {
    throw new Error(`no cluster is running in ${stateDir()}: run \`npm run test:cluster\` (it starts one), or \`npm run cluster\` first`);
  }
  const sec = secrets(state.dir);
  return { state, secrets: sec, base: balancerUrl(state), primaryUrl: databaseUrl(state, sec, { through: 'primary' }) };
}

/** A limit of the instances: what `up` passed on, else the app's default. */
export function limitOf(c: Cluster, variable: string, fallback: number): number {
  const value = c.state.passedEnv[variable];
  return value === undefined ? fallback : Number(value);
}

export interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
  /** The instance that answered, as the balancer names it (X-Served-By). */
  servedBy: string | undefined;
  receivedAt: number;
}

// One agent without a socket limit: concurrent requests really are concurrent. An idle
// socket is dropped after 5 s, before HAProxy closes it (`timeout http-keep-alive 10s`):
// a request sent on a connection the balancer is closing at that moment fails with
// "socket hang up" (after a burst of 100, the pool holds that many idle sockets).
const agent = new http.Agent({ keepAlive: true, maxSockets: Infinity, timeout: 5_000 });

/**
 * One HTTP request through the balancer. `from` picks the loopback address the request
 * comes from (any of 127.0.0.0/8): the balancer sees that address, like a client's.
 */
export function request(
  c: Cluster,
  pathAndQuery: string,
  options: { method?: string; headers?: Record<string, string>; body?: string; from?: string } = {},
): Promise<Answer> {
  const url = new URL(pathAndQuery, c.base);
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: url.hostname,
        port: url.port,
        path: `${url.pathname}${url.search}`,
        method: options.method ?? 'GET',
        headers: { ...(options.body !== undefined ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(options.body) } : {}), ...options.headers },
        // A request from another address gets a connection of its own.
        ...(options.from ? { localAddress: options.from, agent: false } : { agent }),
        timeout: 60_000,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: Buffer.concat(chunks).toString('utf8'),
            servedBy: res.headers['x-served-by'] as string | undefined,
            receivedAt: Date.now() / 1000,
          }),
        );
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`${pathAndQuery}: no answer in 60 s`)));
    req.on('error', reject);
    req.end(options.body);
  });
}

/** A loopback address no other test run used recently: its own bucket of failed attempts. */
export const freshLoopbackAddress = () => `127.${randomInt(1, 255)}.${randomInt(0, 256)}.${randomInt(1, 255)}`;

const run = promisify(execFile);
const TSX = path.join(process.cwd(), 'node_modules', 'tsx', 'dist', 'cli.mjs');
/**
 * The command's environment: the cluster's primary and Redis (a revocation is announced
 * there), nothing of the caller's own DATABASE_URL or REDIS_URL.
 */
const cliEnv = (c: Cluster): NodeJS.ProcessEnv => ({
  PATH: process.env.PATH,
  HOME: process.env.HOME,
  NODE_ENV: 'development',
  DATABASE_URL: c.primaryUrl,
  REDIS_URL: redisUrl(c.state, c.secrets),
});

/** `npm run apikey -- create --email … --name …` on the cluster's primary: the key and its id. */
export async function mintKey(c: Cluster, email: string, name: string): Promise<{ key: string; id: string }> {
  const { stdout, stderr } = await run(process.execPath, [TSX, '--conditions=react-server', 'scripts/apikey.ts', 'create', '--email', email, '--name', name, '--expires-in-days', '1'], {
    env: cliEnv(c),
  });
  const id = /\(([0-9a-f-]{36})\)/.exec(stderr)?.[1];
  if (!id) throw new Error(`apikey create said: ${stderr}`);
  return { key: stdout.trim(), id };
}

export async function revokeKey(c: Cluster, id: string): Promise<void> {
  await run(process.execPath, [TSX, '--conditions=react-server', 'scripts/apikey.ts', 'revoke', '--id', id], { env: cliEnv(c) });
}

/**
 * Waits while the current fixed window of `seconds` is about to end: the sliding window
 * weighs the previous window's count, so a burst that straddles a boundary is counted
 * differently (by design) and exact assertions would not hold.
 */
export async function awayFromWindowEdge(seconds: number, marginMs = 5000): Promise<void> {
  const left = seconds * 1000 - (Date.now() % (seconds * 1000));
  if (left < marginMs) await new Promise((r) => setTimeout(r, left + 50));
}

/** How many answers each instance gave. */
export function byInstance(answers: Answer[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const a of answers) counts[a.servedBy ?? 'none'] = (counts[a.servedBy ?? 'none'] ?? 0) + 1;
  return counts;
}

export const instanceNames = (c: Cluster) => c.state.ports.instances.map((_, i) => `app${i + 1}`);

/**
 * A browser's session through the balancer: next-auth's CSRF token, then its credentials
 * callback; the cookies to send with the app's own tRPC endpoint (/api/trpc), which then
 * lands on whichever instance the balancer picks.
 */
export async function signIn(c: Cluster, email: string, password: string): Promise<string> {
  const jar = new Map<string, string>();
  const keep = (a: Answer) => {
    const set = a.headers['set-cookie'] ?? [];
    for (const line of set) {
      const [pair] = line.split(';');
      const at = pair!.indexOf('=');
      jar.set(pair!.slice(0, at), pair!.slice(at + 1));
    }
  };
  const cookie = () => [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
  const csrf = await request(c, '/api/auth/csrf');
  if (csrf.status !== 200) throw new Error(`GET /api/auth/csrf: ${csrf.status}`);
  keep(csrf);
  const { csrfToken } = JSON.parse(csrf.body) as { csrfToken: string };
  const form = new URLSearchParams({ csrfToken, email, password, callbackUrl: '/' }).toString();
  const callback = await request(c, '/api/auth/callback/credentials', {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'content-length': String(Buffer.byteLength(form)), cookie: cookie() },
    body: form,
  });
  keep(callback);
  if (callback.status !== 302 || String(callback.headers.location ?? '').includes('error=') || ![...jar.keys()].some((k) => k.endsWith('authjs.session-token'))) {
    throw new Error(`sign-in of ${email}: ${callback.status} ${String(callback.headers.location ?? '')}`);
  }
  return cookie();
}

/** A mutation of the app's tRPC endpoint with a session's cookies, as the settings pages send it. */
export async function trpcMutation<T>(c: Cluster, cookie: string, procedure: string, input: unknown): Promise<{ data: T; servedBy: string | undefined }> {
  const answer = await request(c, `/api/trpc/${procedure}`, { method: 'POST', headers: { cookie }, body: JSON.stringify(input) });
  if (answer.status !== 200) throw new Error(`${procedure}: ${answer.status} ${answer.body.slice(0, 300)}`);
  return { data: (JSON.parse(answer.body) as { result: { data: T } }).result.data, servedBy: answer.servedBy };
}
