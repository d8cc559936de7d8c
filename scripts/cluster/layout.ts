import { createHash, randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/**
 * Where every part of the local cluster lives: ports, directories, generated secrets.
 * Decided once by `up` and written to `<state dir>/state.json`; `down` and `status` read
 * that file, so they act on what was started even if the environment changed since.
 */

export const INSTANCE_COUNT = 3;
export const APP_ROLE = 'cda';
export const ADMIN_ROLE = 'postgres';
export const DATABASE = 'cda_cluster';
/** PgBouncer's name for the replica (its entry points at the replica's `cda_cluster`). */
export const REPLICA_DATABASE_ALIAS = 'cda_cluster_replica';
/** postgres.js pool per instance (the app's default), and PgBouncer's limits in front of Postgres. */
export const APP_POOL_MAX = 10;
export const PGBOUNCER_DEFAULT_POOL_SIZE = 20;
export const PGBOUNCER_MAX_CLIENT_CONN = 200;
export const POSTGRES_MAX_CONNECTIONS = 100;

export interface Ports {
  balancer: number;
  instances: number[];
  primary: number;
  replica: number;
  pgbouncer: number;
  redis: number;
}

export interface State {
  /** Absolute path of the state directory. */
  dir: string;
  /** The Postgres data directories and PgBouncer's files: owned by the `postgres` user when run as root. */
  pgRoot: string;
  ports: Ports;
  /** Where `next build` writes the production build the instances run. */
  distDir: string;
  /** Environment variables passed on to the instances from the caller of `up` (RATE_LIMIT_* and a few others). */
  passedEnv: Record<string, string>;
  createdAt: string;
}

export interface Secrets {
  adminPassword: string;
  appPassword: string;
  redisPassword: string;
  authSecret: string;
}

const int = (name: string, fallback: number): number => {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1024 || n > 65535) throw new Error(`${name} must be a port number from 1024 to 65535, not ${JSON.stringify(raw)}`);
  return n;
};

/** The state directory: CLUSTER_DIR, or `.data/cluster` in the project. */
export function stateDir(): string {
  return path.resolve(process.env.CLUSTER_DIR || path.join(process.cwd(), '.data', 'cluster'));
}

/** Ports for a new cluster; each can be moved with an environment variable. */
export function defaultPorts(): Ports {
  const balancer = int('CLUSTER_HTTP_PORT', 3300);
  const primary = int('CLUSTER_PG_PORT', 5440);
  return {
    balancer,
    instances: Array.from({ length: INSTANCE_COUNT }, (_, i) => balancer + 1 + i),
    primary,
    replica: primary + 1,
    pgbouncer: int('CLUSTER_PGBOUNCER_PORT', 6432),
    redis: int('CLUSTER_REDIS_PORT', 6390),
  };
}

const stateFile = (dir: string) => path.join(dir, 'state.json');
const secretsFile = (dir: string) => path.join(dir, 'secrets.json');

export function readState(dir = stateDir()): State | undefined {
  if (!existsSync(stateFile(dir))) return undefined;
  return JSON.parse(readFileSync(stateFile(dir), 'utf8')) as State;
}

export function writeState(state: State): void {
  mkdirSync(state.dir, { recursive: true });
  writeFileSync(stateFile(state.dir), `${JSON.stringify(state, null, 2)}\n`);
}

/** Generated on first use and kept (mode 600): the cluster's data survives `down` and `up`. */
export function secrets(dir: string): Secrets {
  const file = secretsFile(dir);
  if (existsSync(file)) return JSON.parse(readFileSync(file, 'utf8')) as Secrets;
  // base64url: safe unquoted in URLs, PgBouncer's userlist and SQL string literals.
  const token = () => randomBytes(24).toString('base64url');
  const created: Secrets = { adminPassword: token(), appPassword: token(), redisPassword: token(), authSecret: randomBytes(32).toString('base64') };
  mkdirSync(dir, { recursive: true });
  writeFileSync(file, `${JSON.stringify(created, null, 2)}\n`, { mode: 0o600 });
  chmodSync(file, 0o600);
  return created;
}

/** A short name for this state directory, for paths outside it (see postgres.ts). */
export function stateId(dir: string): string {
  return createHash('sha256').update(dir).digest('hex').slice(0, 10);
}

// ------------------------------------------------------------------------------------
// Paths and URLs derived from the state

export const paths = (s: State) => ({
  primaryData: path.join(s.pgRoot, 'primary'),
  replicaData: path.join(s.pgRoot, 'replica'),
  primaryLog: path.join(s.pgRoot, 'primary.log'),
  replicaLog: path.join(s.pgRoot, 'replica.log'),
  pgbouncerDir: path.join(s.pgRoot, 'pgbouncer'),
  redisDir: path.join(s.dir, 'redis'),
  haproxyDir: path.join(s.dir, 'haproxy'),
  appDir: path.join(s.dir, 'app'),
});

/** Connection strings. `through` picks the way in: PgBouncer (as the app) or a server directly. */
export function databaseUrl(s: State, sec: Secrets, options: { role?: 'app' | 'admin'; through?: 'pgbouncer' | 'primary' | 'replica'; database?: string } = {}): string {
  const role = options.role ?? 'app';
  const user = role === 'app' ? APP_ROLE : ADMIN_ROLE;
  const password = role === 'app' ? sec.appPassword : sec.adminPassword;
  const through = options.through ?? 'pgbouncer';
  const port = through === 'pgbouncer' ? s.ports.pgbouncer : through === 'primary' ? s.ports.primary : s.ports.replica;
  return `postgres://${user}:${password}@127.0.0.1:${port}/${options.database ?? DATABASE}`;
}

export const redisUrl = (s: State, sec: Secrets) => `redis://:${sec.redisPassword}@127.0.0.1:${s.ports.redis}`;
export const balancerUrl = (s: State) => `http://127.0.0.1:${s.ports.balancer}`;

/** A URL with its password replaced, for printing. */
export const masked = (url: string) => url.replace(/:\/\/([^:@/]*):[^@/]+@/, '://$1:***@');
