#!/usr/bin/env node
// The npm registry these machines reach serves only some platforms' builds of native
// packages (for example @next/swc-darwin-arm64 answers 404). `npm install` then leaves
// those optional dependencies out of package-lock.json, and `npm ci` refuses the lock
// ("Missing: … from lock file"). This script adds a lock entry for each missing optional
// dependency, restricted to its own os/cpu, so `npm ci` skips it here as it would on any
// platform it does not fit. Run it after `npm install` changes the lock:
//   node scripts/lockfile-foreign-platforms.mjs
import { readFileSync, writeFileSync } from 'node:fs';

const lock = JSON.parse(readFileSync('package-lock.json', 'utf8'));
const packages = lock.packages;

/** os, cpu and libc of a platform package, read from its name. */
function platformOf(name) {
  const tail = name.split('/').pop();
  const os = ['darwin', 'win32', 'linux', 'android', 'freebsd', 'openharmony', 'sunos', 'aix', 'netbsd', 'openbsd'].find((o) => tail.includes(o));
  const cpu = ['arm64', 'x64', 'ia32', 'arm', 'loong64', 'ppc64', 'riscv64', 's390x', 'mips64el', 'wasm32'].find((c) => tail.includes(`-${c}`));
  const libc = os === 'linux' ? (tail.includes('musl') ? 'musl' : 'glibc') : undefined;
  return os && cpu ? { os, cpu, libc } : undefined;
}

let added = 0;
for (const [path, entry] of Object.entries(packages)) {
  for (const [dep, version] of Object.entries(entry.optionalDependencies ?? {})) {
    const base = path === '' ? '' : `${path}/`;
    if (packages[`${base}node_modules/${dep}`] || packages[`node_modules/${dep}`]) continue;
    const platform = platformOf(dep);
    if (!platform || !/^\d+\.\d+\.\d+/.test(version)) continue;
    packages[`node_modules/${dep}`] = {
      version,
      cpu: [platform.cpu],
      ...(entry.dev ? { dev: true } : {}),
      ...(platform.libc ? { libc: [platform.libc] } : {}),
      optional: true,
      os: [platform.os],
    };
    added++;
  }
}
lock.packages = Object.fromEntries(Object.entries(packages).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a < b ? -1 : 1)));
writeFileSync('package-lock.json', `${JSON.stringify(lock, null, 2)}\n`);
console.log(`Added ${added} lock entries for other platforms' optional packages.`);
