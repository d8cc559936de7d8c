import type { ExplainResult } from './explain';
import type { ProfileSummary } from './profile';

/** Medians, ratios, targets and their rendering (stdout table and docs/benchmarks.md). */

export interface Measurement {
  requests: number;
  /** Requests (or exports) per second. */
  rps: number;
  /** Latency percentiles in ms (for exports: median and slowest export duration). */
  p50: number;
  p99: number;
  /** Server CPU (user + system) per request; per 1,000 rows for exports. */
  cpuMsPerRequest: number;
  /** CPU of the server's Postgres backends per request; per 1,000 rows for exports. */
  pgCpuMsPerRequest: number;
  /** Peak RSS of the server during the measurement minus RSS before it. */
  rssGrowthMiB: number;
  failures: number;
  rows?: number;
  rowsPerSecond?: number;
  ttfbMs?: number;
}

export interface Cell {
  scenario: string;
  title: string;
  kind: 'requests' | 'export';
  connections: number;
  /**
   * floor: the bare node:http floor; next: the Next.js floor (JSON requests only; absent in
   * results of older runs); base: the app copy given with --base-app-dir, if any.
   */
  rounds: { floor: Measurement; app: Measurement; next?: Measurement; base?: Measurement }[];
}

type Who = 'floor' | 'next' | 'base' | 'app';

/** `server`: which server was profiled ("the app" in results of older runs). */
export type ProfiledRun = ProfileSummary & { server?: string; scenario: string; unit: { label: string; count: number } };

export interface Target {
  target: string;
  measured: string;
  pass: boolean;
}

export interface BenchReport {
  label?: string;
  date: string;
  smoke: boolean;
  config: Record<string, unknown>;
  machine: Record<string, unknown> & { cpus: number; cpuModel: string; memoryGiB: number; node: string; postgres: string };
  dataset: { contracts: number; exportRows: Record<string, number> };
  explains: Record<string, Record<string, ExplainResult>>;
  cells: Cell[];
  profiles?: ProfiledRun[];
  durationSeconds: number;
  targets?: Target[];
}

export const median = (values: number[]) => {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

type Metric = Exclude<keyof Measurement, 'failures'>;
const med = (cell: Cell, who: Who, metric: Metric) => median(cell.rounds.map((r) => r[who]?.[metric] ?? NaN));
/** The app's throughput over `of`'s in each round (rows/s for exports); NaN where `of` was not measured. */
function ratioOf(cell: Cell, of: Exclude<Who, 'app'> = 'floor'): number[] {
  return cell.rounds.map((r) => {
    const other = r[of];
    if (!other) return NaN;
    return cell.kind === 'export' ? (r.app.rowsPerSecond ?? 0) / (other.rowsPerSecond ?? 1) : r.app.rps / other.rps;
  });
}
const hasBase = (report: BenchReport) => report.cells.some((c) => c.rounds.some((r) => r.base));
/** " (the app's build with OBSERVABILITY=off)" when the base is the app run with --base-env. */
const baseEnvOf = (report: BenchReport) => {
  const env = Object.entries((report.config.baseEnv as Record<string, string> | undefined) ?? {});
  return env.length > 0 && report.config.baseAppDir === report.config.appDir ? ` (the app's build with ${env.map(([k, v]) => `${k}=${v}`).join(', ')})` : '';
};

const f1 = (n: number) => (Number.isFinite(n) ? n.toFixed(1) : '-');
const f2 = (n: number) => (Number.isFinite(n) ? n.toFixed(2) : '-');
const f0 = (n: number) => (Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : '-');

function table(header: string[], rows: string[][], markdown: boolean): string {
  if (markdown) {
    return [`| ${header.join(' | ')} |`, `|${header.map(() => '---').join('|')}|`, ...rows.map((r) => `| ${r.join(' | ')} |`)].join('\n');
  }
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => (i < 2 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

function requestRows(report: BenchReport): { header: string[]; rows: string[][] } {
  const base = hasBase(report);
  const header = [
    'scenario',
    'conns',
    'floor req/s',
    'Next floor req/s',
    ...(base ? ['base req/s'] : []),
    'app req/s',
    'app/floor (rounds)',
    'app/floor',
    'app/Next (rounds)',
    'app/Next',
    ...(base ? ['app/base'] : []),
    'app p50 ms',
    'app p99 ms',
    'Next p50',
    'Next p99',
    'floor p50',
    'floor p99',
    'app CPU ms/req',
    ...(base ? ['base CPU ms/req'] : []),
    'Next CPU ms/req',
    'floor CPU ms/req',
    'PG CPU ms/req app',
    'PG floor',
  ];
  const rows = report.cells
    .filter((c) => c.kind === 'requests')
    .map((c) => [
      c.scenario,
      String(c.connections),
      f0(med(c, 'floor', 'rps')),
      f0(med(c, 'next', 'rps')),
      ...(base ? [f0(med(c, 'base', 'rps'))] : []),
      f0(med(c, 'app', 'rps')),
      ratioOf(c).map(f2).join(' '),
      f2(median(ratioOf(c))),
      ratioOf(c, 'next').map(f2).join(' '),
      f2(median(ratioOf(c, 'next'))),
      ...(base ? [f2(median(ratioOf(c, 'base')))] : []),
      f1(med(c, 'app', 'p50')),
      f1(med(c, 'app', 'p99')),
      f1(med(c, 'next', 'p50')),
      f1(med(c, 'next', 'p99')),
      f1(med(c, 'floor', 'p50')),
      f1(med(c, 'floor', 'p99')),
      f2(med(c, 'app', 'cpuMsPerRequest')),
      ...(base ? [f2(med(c, 'base', 'cpuMsPerRequest'))] : []),
      f2(med(c, 'next', 'cpuMsPerRequest')),
      f2(med(c, 'floor', 'cpuMsPerRequest')),
      f2(med(c, 'app', 'pgCpuMsPerRequest')),
      f2(med(c, 'floor', 'pgCpuMsPerRequest')),
    ]);
  return { header, rows };
}

function exportRows(report: BenchReport): { header: string[]; rows: string[][] } {
  const header = [
    'scenario',
    'conns',
    'rows/export',
    'floor rows/s',
    'app rows/s',
    'app/floor (rounds)',
    'app/floor',
    'app TTFB ms',
    'floor TTFB ms',
    'app s/export',
    'app RSS growth MiB',
    'floor RSS MiB',
    'app CPU ms/1k rows',
    'floor CPU ms/1k rows',
    'PG CPU ms/1k rows app',
  ];
  const rows = report.cells
    .filter((c) => c.kind === 'export')
    .map((c) => {
      const perExport = c.rounds[0]!.app.rows! / Math.max(1, c.rounds[0]!.app.requests);
      return [
        c.scenario,
        String(c.connections),
        f0(perExport),
        f0(med(c, 'floor', 'rowsPerSecond')),
        f0(med(c, 'app', 'rowsPerSecond')),
        ratioOf(c).map(f2).join(' '),
        f2(median(ratioOf(c))),
        f0(med(c, 'app', 'ttfbMs')),
        f0(med(c, 'floor', 'ttfbMs')),
        f2(med(c, 'app', 'p50') / 1000),
        f0(med(c, 'app', 'rssGrowthMiB')),
        f0(med(c, 'floor', 'rssGrowthMiB')),
        f1(med(c, 'app', 'cpuMsPerRequest')),
        f1(med(c, 'floor', 'cpuMsPerRequest')),
        f1(med(c, 'app', 'pgCpuMsPerRequest')),
      ];
    });
  return { header, rows };
}

function explainRows(report: BenchReport): { header: string[]; rows: string[][] } {
  const header = ['scenario', 'statement', 'prepared: exec ms', 'plan', 'custom: plan + exec ms', 'buffers hit'];
  const rows: string[][] = [];
  for (const [scenario, statements] of Object.entries(report.explains)) {
    for (const [label, e] of Object.entries(statements)) {
      rows.push([
        scenario,
        label,
        f2(e.prepared.executionMs + e.prepared.planningMs),
        e.prepared.generic ? 'generic' : 'custom',
        `${f2(e.custom.planningMs)} + ${f2(e.custom.executionMs)}`,
        f0(e.prepared.sharedHit),
      ]);
    }
  }
  return { header, rows };
}

const cellOf = (report: BenchReport, scenario: string, connections: number) =>
  report.cells.find((c) => c.scenario === scenario && c.connections === connections);

/** Postgres time of a request: every statement but the key lookup (cached for 30 s), prepared. */
export function pgTimeOf(report: BenchReport, scenario: string, labels?: string[]): number {
  const statements = report.explains[scenario];
  if (!statements) return NaN;
  return Object.entries(statements)
    .filter(([label]) => label !== 'key' && (!labels || labels.includes(label)))
    .reduce((sum, [, e]) => sum + e.prepared.executionMs + e.prepared.planningMs, 0);
}

export function evaluateTargets(report: BenchReport): Target[] {
  const targets: Target[] = [];
  const add = (target: string, value: number, limit: number, better: 'low' | 'high', format: (n: number) => string) => {
    if (!Number.isFinite(value)) return;
    targets.push({ target, measured: format(value), pass: better === 'low' ? value <= limit : value >= limit });
  };
  const typical16 = cellOf(report, 'list-typical-50', 16);
  const typical1 = cellOf(report, 'list-typical-50', 1);
  // Issue 14: list and get-one against both floors, at both connection counts.
  for (const [scenario, name] of [
    ['list-typical-50', 'list typical'],
    ['get-one', 'get-one'],
  ] as const) {
    for (const connections of [16, 1]) {
      const cell = cellOf(report, scenario, connections);
      if (!cell) continue;
      add(`${name} x${connections}: app >= 0.8x Next floor throughput`, median(ratioOf(cell, 'next')), 0.8, 'high', (n) => `${f2(n)}x`);
      add(`${name} x${connections}: app >= 0.5x bare floor throughput`, median(ratioOf(cell)), 0.5, 'high', (n) => `${f2(n)}x`);
      if (connections === 1) add(`${name} x1: p99 <= 10 ms`, med(cell, 'app', 'p99'), 10, 'low', (n) => `${f1(n)} ms`);
    }
  }
  if (typical16) {
    add('list typical x16: app Node CPU <= 2.0 ms/request', med(typical16, 'app', 'cpuMsPerRequest'), 2.0, 'low', (n) => `${f2(n)} ms`);
  }
  if (typical1) {
    add('list typical x1: p50 <= 5 ms', med(typical1, 'app', 'p50'), 5, 'low', (n) => `${f1(n)} ms`);
    add('list typical x1: p99 <= 15 ms', med(typical1, 'app', 'p99'), 15, 'low', (n) => `${f1(n)} ms`);
  }
  add('list heavy: Postgres time of page + total <= 5 ms (EXPLAIN ANALYZE, as prepared statements)', pgTimeOf(report, 'list-heavy-50', ['page', 'count']), 5, 'low', (n) => `${f2(n)} ms`);
  const heavy16 = cellOf(report, 'list-heavy-50', 16);
  if (heavy16 && typical16) {
    add('list heavy x16: p99 <= 3x typical p99', med(heavy16, 'app', 'p99') / med(typical16, 'app', 'p99'), 3, 'low', (n) => `${f2(n)}x`);
  }
  const offset16 = cellOf(report, 'list-heavy-offset-5000', 16);
  const offset1 = cellOf(report, 'list-heavy-offset-5000', 1);
  const heavy1 = cellOf(report, 'list-heavy-50', 1);
  if (offset16 && heavy16) {
    add('offset 5000 <= 2x offset 0 (x16 throughput)', med(heavy16, 'app', 'rps') / med(offset16, 'app', 'rps'), 2, 'low', (n) => `${f2(n)}x`);
  }
  if (offset1 && heavy1) {
    add('offset 5000 <= 2x offset 0 (x1 p50)', med(offset1, 'app', 'p50') / med(heavy1, 'app', 'p50'), 2, 'low', (n) => `${f2(n)}x`);
  }
  const large = report.cells.filter((c) => c.kind === 'export').sort((a, b) => (b.rounds[0]!.app.rows ?? 0) - (a.rounds[0]!.app.rows ?? 0))[0];
  if (large) {
    const one = cellOf(report, large.scenario, 1);
    if (one) {
      add(`${large.scenario} x1: >= 50,000 rows/s`, med(one, 'app', 'rowsPerSecond'), 50_000, 'high', f0);
      add(`${large.scenario} x1: time to first byte <= 300 ms`, med(one, 'app', 'ttfbMs'), 300, 'low', (n) => `${f0(n)} ms`);
      add(`${large.scenario} x1: server RSS growth <= 64 MB`, med(one, 'app', 'rssGrowthMiB') * 1.048576, 64, 'low', (n) => `${f0(n)} MB`);
    }
  }
  return targets;
}

export function renderTable(report: BenchReport): string {
  const parts: string[] = [];
  const req = requestRows(report);
  if (req.rows.length > 0) parts.push(table(req.header, req.rows, false));
  const exp = exportRows(report);
  if (exp.rows.length > 0) parts.push(table(exp.header, exp.rows, false));
  const ex = explainRows(report);
  if (ex.rows.length > 0) parts.push(table(ex.header, ex.rows, false));
  if (report.targets && report.targets.length > 0) {
    parts.push(table(['target', 'measured', 'met'], report.targets.map((t) => [t.target, t.measured, t.pass ? 'yes' : 'NO']), false));
  }
  return parts.join('\n\n');
}

const START = '<!-- bench:results:start -->';
const END = '<!-- bench:results:end -->';

/** docs/benchmarks.md: the generated section between the markers is replaced, the rest kept. */
export function renderDocs(existing: string, report: BenchReport, resultsFile: string): string {
  const m = report.machine;
  const lines: string[] = [
    START,
    `<!-- Generated by \`npm run bench\` on ${report.date}; do not edit by hand. -->`,
    '',
    `### Run of ${report.date.slice(0, 10)} (${report.durationSeconds} s, raw results in \`${resultsFile}\`, git-ignored)`,
    '',
    `- Machine: ${m.cpus} vCPUs (${m.cpuModel}), ${m.memoryGiB} GiB RAM, ${String(m.kernel)}; load average ${String(m.loadAverage)} at the start, ${String(m.loadAverageAtEnd)} at the end (the machine is shared with other work).`,
    `- ${m.postgres.split(' on ')[0]}, Node ${m.node}, Redis on the same machine; the load generator (autocannon) runs on the same 2 cores, in its own process.`,
    `- Dataset: ${report.dataset.contracts.toLocaleString('en-US')} contracts; exports by two benchmark callers who see ${Object.values(report.dataset.exportRows).map((n) => n.toLocaleString('en-US')).join(' and ')} contracts.`,
    `- Each measurement: ${String(report.config.duration)} s after a ${String(report.config.warmup)} s warm-up; ${String(report.config.rounds)} rounds of the bare floor, the Next.js floor (JSON requests only)${hasBase(report) ? `, the base app${baseEnvOf(report)}` : ''} then the app; figures are medians of the rounds, ratios are the app's throughput over a floor's per round and their median.`,
    '',
    '#### Requests',
    '',
    table(requestRows(report).header, requestRows(report).rows, true),
    '',
    '#### Exports',
    '',
    table(exportRows(report).header, exportRows(report).rows, true),
    '',
    '#### Postgres time per statement (EXPLAIN ANALYZE, TIMING OFF, median of 5)',
    '',
    table(explainRows(report).header, explainRows(report).rows, true),
    '',
    '#### Targets',
    '',
    table(['target', 'measured', 'met'], (report.targets ?? []).map((t) => [t.target, t.measured, t.pass ? 'yes' : '**no**']), true),
    '',
  ];
  for (const p of report.profiles ?? []) {
    lines.push(
      `#### Where ${p.server ?? 'the app'}'s CPU goes: ${p.scenario} (\`node --cpu-prof\`, ${p.busyMs} ms of busy samples, ${((p.busyMs / Math.max(1e-9, p.unit.count)) * 1000).toFixed(0)} µs per ${p.unit.label}; the profiler itself slows the app down)`,
      '',
      'Self time by package or part of the bundle:',
      '',
      table(['bucket', 'self ms', '%'], p.buckets.slice(0, 15).map((b) => [b.bucket, f1(b.selfMs), f1(b.share)]), true),
      '',
      'Top functions by self time (minified names in the bundle, located through its source maps):',
      '',
      table(['function', 'where', 'bucket', 'self ms', '%'], p.topFunctions.slice(0, 20).map((t) => [`\`${t.name}\``, t.where, t.bucket, f1(t.selfMs), f1(t.share)]), true),
      '',
    );
  }
  lines.push(END);
  const generated = lines.join('\n');
  const start = existing.indexOf(START);
  const end = existing.indexOf(END);
  if (start !== -1 && end !== -1) return `${existing.slice(0, start)}${generated}${existing.slice(end + END.length)}`;
  return `${existing || '# Benchmarks\n\n'}\n## Last full run\n\n${generated}\n`;
}
