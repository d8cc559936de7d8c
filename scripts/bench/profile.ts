import { existsSync, readFileSync } from 'node:fs';
import { SourceMap } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** A summary of a V8 .cpuprofile (node --cpu-prof): self time by function and by package. */

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

export interface ProfileSummary {
  file: string;
  /** Sampled time without (idle), ms. */
  busyMs: number;
  topFunctions: { name: string; where: string; bucket: string; selfMs: number; share: number }[];
  buckets: { bucket: string; selfMs: number; share: number }[];
}

/** The package (or app folder) of a file path: node_modules/<name>, else the path itself. */
function packageOf(file: string): string {
  const clean = decodeURIComponent(file).replace(/^(\.\.\/)+/, '');
  const modules = clean.lastIndexOf('node_modules/');
  if (modules === -1) {
    if (clean.startsWith('turbopack:')) return 'turbopack runtime';
    if (clean.startsWith('webpack://')) return clean.slice('webpack://'.length).split('/')[0]!;
    return `app: ${clean}`;
  }
  const rest = clean.slice(modules + 'node_modules/'.length).split('/');
  // drizzle-orm's own source maps point at ../src, which Turbopack resolves to node_modules/src.
  if (rest[0] === 'src') return rest[1] === 'api' ? 'next' : 'drizzle-orm';
  const name = rest[0]!.startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]!;
  if (name === 'next' && rest[1] === 'dist' && rest[2] === 'compiled') return `next (compiled ${rest[3]})`;
  return name;
}

/** Source maps of the built server chunks, to attribute minified bundle code to its package. */
const maps = new Map<string, SourceMap | null>();
function sourceMapOf(url: string): SourceMap | null {
  if (!maps.has(url)) {
    let map: SourceMap | null = null;
    try {
      const file = `${fileURLToPath(url)}.map`;
      if (existsSync(file)) map = new SourceMap(JSON.parse(readFileSync(file, 'utf8')));
    } catch {
      map = null;
    }
    maps.set(url, map);
  }
  return maps.get(url)!;
}

/** Which library or part of the app a profile frame belongs to, and its original source. */
export function locate(frame: ProfileNode['callFrame']): { bucket: string; where: string } {
  const { url, functionName, lineNumber, columnNumber } = frame;
  if (!url) return { bucket: functionName.startsWith('(') ? functionName : 'native', where: '' };
  if (url.startsWith('node:')) return { bucket: `node:${url.slice(5).split('/')[0]}`, where: `${url}:${lineNumber + 1}` };
  const map = url.startsWith('file:') && !url.includes('/node_modules/') ? sourceMapOf(url) : null;
  if (map) {
    const entry = map.findEntry(lineNumber, columnNumber) as { originalSource?: string; originalLine?: number };
    if (entry.originalSource) {
      const original = decodeURIComponent(entry.originalSource).replace(/^(\.\.\/)+/, '');
      return { bucket: packageOf(entry.originalSource), where: `${original}:${(entry.originalLine ?? 0) + 1}` };
    }
  }
  const file = url.replace(/^file:\/\//, '');
  return { bucket: packageOf(path.relative(process.cwd(), file)), where: `${path.relative(process.cwd(), file)}:${lineNumber + 1}` };
}

/**
 * `window`: only the samples taken between these two instants (microseconds of the
 * monotonic clock, process.hrtime.bigint() / 1000, which V8's profile timestamps share),
 * so that start-up and warm-up are left out.
 */
export function summariseProfile(file: string, window?: { startUs: number; endUs: number }, top = 25): ProfileSummary {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const selfUs = new Map<number, number>();
  let t = profile.startTime;
  profile.samples.forEach((id, i) => {
    const delta = profile.timeDeltas[i] ?? 0;
    t += delta;
    if (window && (t < window.startUs || t > window.endUs)) return;
    selfUs.set(id, (selfUs.get(id) ?? 0) + delta);
  });
  const functions = new Map<string, { name: string; where: string; bucket: string; us: number }>();
  const buckets = new Map<string, number>();
  let busyUs = 0;
  for (const [id, us] of selfUs) {
    const node = byId.get(id)!;
    const { functionName } = node.callFrame;
    if (functionName === '(idle)') continue;
    busyUs += us;
    const { bucket, where } = locate(node.callFrame);
    const key = `${functionName}@${where}`;
    const entry = functions.get(key) ?? { name: functionName || '(anonymous)', where, bucket, us: 0 };
    entry.us += us;
    functions.set(key, entry);
    buckets.set(bucket, (buckets.get(bucket) ?? 0) + us);
  }
  const share = (us: number) => Math.round((us / busyUs) * 1000) / 10;
  return {
    file,
    busyMs: Math.round(busyUs / 1000),
    topFunctions: [...functions.values()]
      .sort((a, b) => b.us - a.us)
      .slice(0, top)
      .map((f) => ({ name: f.name, where: f.where, bucket: f.bucket, selfMs: Math.round(f.us / 100) / 10, share: share(f.us) })),
    buckets: [...buckets.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([bucket, us]) => ({ bucket, selfMs: Math.round(us / 100) / 10, share: share(us) })),
  };
}
