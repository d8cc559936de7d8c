import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/**
 * A production build (`next build`) that is newer than every source file it is built
 * from, for a test that runs the app as `next start` does: `.next` when it is fresh (CI
 * builds it before the tests), else `.next-logs-test` (NEXT_DIST_DIR) when an earlier run
 * built one, else undefined. The dist dir to pass as NEXT_DIST_DIR to `next start`.
 */
export function existingProductionBuild(): string | undefined {
  const newestSource = Math.max(...SOURCES.map((entry) => newestMtime(path.join(root, entry))));
  return ['.next', OWN_DIST_DIR].find((dist) => {
    const id = path.join(root, dist, 'BUILD_ID');
    return existsSync(id) && statSync(id).mtimeMs > newestSource;
  });
}

/**
 * existingProductionBuild(), or a build made now into `.next-logs-test`, which a
 * developer's `.next` never sees (two minutes of both cores: `npm test` only does it in
 * CI, where .ci/run has built `.next` first anyway).
 */
const root = path.resolve(import.meta.dirname, '..', '..', '..');
const SOURCES = ['app', 'server', 'db', 'lib', 'components', 'proxy.ts', 'instrumentation.ts', 'next.config.mjs', 'package-lock.json', 'tsconfig.json'];
const OWN_DIST_DIR = '.next-logs-test';

export function freshProductionBuild(): string {
  const existing = existingProductionBuild();
  if (existing) return existing;
  // next build adds a custom dist dir's types to tsconfig.json (and reformats it): put it
  // back as it was, with its time, so that the build stays the newer.
  const tsconfig = path.join(root, 'tsconfig.json');
  const tsconfigText = readFileSync(tsconfig, 'utf8');
  const tsconfigStat = statSync(tsconfig);
  const build = spawnSync(process.execPath, [path.join(root, 'node_modules', 'next', 'dist', 'bin', 'next'), 'build'], {
    cwd: root,
    env: { ...process.env, NEXT_DIST_DIR: OWN_DIST_DIR, NEXT_TELEMETRY_DISABLED: '1', NODE_ENV: 'production' },
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  if (readFileSync(tsconfig, 'utf8') !== tsconfigText) {
    writeFileSync(tsconfig, tsconfigText);
    utimesSync(tsconfig, tsconfigStat.atime, tsconfigStat.mtime);
  }
  if (build.status !== 0) throw new Error(`next build failed (exit ${build.status}):\n${`${build.stdout}\n${build.stderr}`.slice(-4000)}`);
  return OWN_DIST_DIR;
}

function newestMtime(entry: string): number {
  if (!existsSync(entry)) return 0;
  const stat = statSync(entry);
  if (!stat.isDirectory()) return stat.mtimeMs;
  let newest = stat.mtimeMs;
  for (const child of readdirSync(entry)) newest = Math.max(newest, newestMtime(path.join(entry, child)));
  return newest;
}
