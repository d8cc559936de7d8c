import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';

/** Process accounting from /proc (Linux): CPU time, resident memory, process trees. */

const CLK_TCK = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();
const PAGE_SIZE = (() => {
  try {
    return Number(execFileSync('getconf', ['PAGESIZE'], { encoding: 'utf8' }).trim()) || 4096;
  } catch {
    return 4096;
  }
})();

interface Stat {
  ppid: number;
  cpuMs: number;
  rssBytes: number;
}

function readStat(pid: number): Stat | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // The command name is in parentheses and may contain spaces: fields start after the last ')'.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  return {
    ppid: Number(fields[1]),
    cpuMs: ((Number(fields[11]) + Number(fields[12])) * 1000) / CLK_TCK,
    rssBytes: Number(fields[21]) * PAGE_SIZE,
  };
}

/** The pid and its descendants. */
export function processTree(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = readStat(Number(entry));
    if (!stat) continue;
    const list = children.get(stat.ppid) ?? [];
    list.push(Number(entry));
    children.set(stat.ppid, list);
  }
  const out: number[] = [];
  const queue = [root];
  while (queue.length > 0) {
    const pid = queue.shift()!;
    out.push(pid);
    queue.push(...(children.get(pid) ?? []));
  }
  return out;
}

/** User + system CPU time of the processes, by pid (ms). */
export function cpuTimes(pids: number[]): Map<number, number> {
  const out = new Map<number, number>();
  for (const pid of pids) {
    const stat = readStat(pid);
    if (stat) out.set(pid, stat.cpuMs);
  }
  return out;
}

/** CPU used between two snapshots; a pid that appeared in between counts from zero. */
export function cpuDelta(before: Map<number, number>, after: Map<number, number>): number {
  let total = 0;
  for (const [pid, ms] of after) total += ms - (before.get(pid) ?? 0);
  return total;
}

export function treeCpuMs(root: number): number {
  let total = 0;
  for (const ms of cpuTimes(processTree(root)).values()) total += ms;
  return total;
}

export function treeRssBytes(root: number): number {
  return processTree(root).reduce((sum, pid) => sum + (readStat(pid)?.rssBytes ?? 0), 0);
}

/** Samples the RSS of a process tree until stopped; returns the peak. */
export function sampleRss(root: number, everyMs = 50) {
  let peak = treeRssBytes(root);
  const timer = setInterval(() => {
    peak = Math.max(peak, treeRssBytes(root));
  }, everyMs);
  return {
    stop() {
      clearInterval(timer);
      return Math.max(peak, treeRssBytes(root));
    },
  };
}

export function machine() {
  const cpuinfo = readFileSync('/proc/cpuinfo', 'utf8');
  const model = /model name\s*:\s*(.+)/.exec(cpuinfo)?.[1]?.trim() ?? 'unknown';
  const mhz = /cpu MHz\s*:\s*(.+)/.exec(cpuinfo)?.[1]?.trim();
  return {
    cpus: os.availableParallelism(),
    cpuModel: mhz ? `${model} (${Math.round(Number(mhz))} MHz)` : model,
    memoryGiB: Math.round((os.totalmem() / 2 ** 30) * 10) / 10,
    kernel: `${os.type()} ${os.release()}`,
    node: process.version,
    loadAverage: os.loadavg().map((l) => Math.round(l * 100) / 100),
  };
}
