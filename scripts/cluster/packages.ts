import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { isRoot, run } from './processes';

/**
 * The Debian programs the cluster runs, installed with apt-get when missing (as root).
 * Package scripts would start the packages' own services (pgbouncer on 6432, nginx on
 * 80…): while installing, a policy-rc.d that forbids starting services is put in place
 * unless one exists already, and removed afterwards.
 */

export interface Programs {
  /** Directory of initdb, pg_ctl, postgres, pg_basebackup (the newest installed major version). */
  pgBin: string;
  pgbouncer: string;
  haproxy: string;
  redisServer: string;
}

const SEARCH_PATH = [...(process.env.PATH ?? '').split(':'), '/usr/sbin', '/usr/bin', '/sbin', '/bin'];

function which(name: string): string | undefined {
  for (const dir of SEARCH_PATH) {
    const candidate = path.join(dir, name);
    if (dir && existsSync(candidate)) return candidate;
  }
  return undefined;
}

function postgresBin(): string | undefined {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root)
    .filter((v) => /^\d+$/.test(v) && ['initdb', 'pg_ctl', 'postgres', 'pg_basebackup'].every((b) => existsSync(path.join(root, v, 'bin', b))))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] === undefined ? undefined : path.join(root, versions[0], 'bin');
}

function find(): { found: Partial<Programs>; missing: string[] } {
  const found: Partial<Programs> = { pgBin: postgresBin(), pgbouncer: which('pgbouncer'), haproxy: which('haproxy'), redisServer: which('redis-server') };
  const packages: Record<keyof Programs, string> = { pgBin: 'postgresql', pgbouncer: 'pgbouncer', haproxy: 'haproxy', redisServer: 'redis-server' };
  const missing = (Object.keys(packages) as (keyof Programs)[]).filter((k) => !found[k]).map((k) => packages[k]);
  return { found, missing };
}

/** The programs as they are, installing nothing (`down` stops what runs; it never installs). */
export function installedPrograms(): Programs {
  const { found, missing } = find();
  if (missing.length > 0) throw new Error(`not installed: ${missing.join(', ')}`);
  return found as Programs;
}

export function ensurePrograms(log: (line: string) => void): Programs {
  let { found, missing } = find();
  if (missing.length > 0) {
    if (!isRoot()) {
      throw new Error(`missing Debian packages: ${missing.join(', ')}. Install them first:\n  sudo apt-get install -y ${missing.join(' ')}`);
    }
    log(`installing ${missing.join(', ')} (apt-get)…`);
    install(missing);
    ({ found, missing } = find());
    if (missing.length > 0) throw new Error(`still missing after apt-get: ${missing.join(', ')}`);
  }
  return found as Programs;
}

function install(packages: string[]): void {
  const policy = '/usr/sbin/policy-rc.d';
  const ours = !existsSync(policy);
  if (ours) writeFileSync(policy, '#!/bin/sh\n# written by the Contract Data API cluster script while it installs packages\nexit 101\n', { mode: 0o755 });
  try {
    const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
    const attempt = () => spawnSync('apt-get', ['install', '-y', '-q', '--no-install-recommends', ...packages], { env, encoding: 'utf8' });
    let result = attempt();
    if (result.status !== 0) {
      // Usually stale package lists on a fresh machine.
      run('apt-get', ['update', '-q'], { env });
      result = attempt();
    }
    if (result.status !== 0) throw new Error(`apt-get install ${packages.join(' ')} failed:\n${(result.stdout + result.stderr).slice(-3000)}`);
  } finally {
    if (ours) rmSync(policy, { force: true });
  }
}
