/**
 * The load generator, run as its own process so that its CPU is not the server's:
 * `tsx scripts/bench/load.ts '<job json>'` prints one JSON result line on stdout.
 *
 * - kind "requests": autocannon against one URL for `duration` seconds.
 * - kind "export": `connections` loops of POST exports for `duration` seconds (the
 *   exports in flight at the deadline are completed, within `timeoutSeconds`); records
 *   time to first byte, rows and duration of each export.
 */
import http from 'node:http';
import autocannon from 'autocannon';

export interface RequestsJob {
  kind: 'requests';
  url: string;
  headers: Record<string, string>;
  connections: number;
  duration: number;
}

export interface ExportJob {
  kind: 'export';
  url: string;
  headers: Record<string, string>;
  body: string;
  connections: number;
  duration: number;
  timeoutSeconds: number;
}

export interface RequestsResult {
  kind: 'requests';
  requests: number;
  rps: number;
  latencyP50: number;
  latencyP99: number;
  latencyMean: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  durationSeconds: number;
}

export interface ExportResult {
  kind: 'export';
  exports: number;
  failed: number;
  rows: number;
  bytes: number;
  wallSeconds: number;
  rowsPerSecond: number;
  ttfbMs: number[];
  exportSeconds: number[];
}

async function requests(job: RequestsJob): Promise<RequestsResult> {
  const result = await autocannon({
    url: job.url,
    headers: job.headers,
    connections: job.connections,
    duration: job.duration,
    timeout: 30,
  });
  return {
    kind: 'requests',
    requests: result.requests.total,
    rps: result.requests.total / result.duration,
    latencyP50: result.latency.p50,
    latencyP99: result.latency.p99,
    latencyMean: result.latency.average,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    durationSeconds: result.duration,
  };
}

function oneExport(job: ExportJob, agent: http.Agent): Promise<{ ok: boolean; rows: number; bytes: number; ttfbMs: number; seconds: number }> {
  return new Promise((resolve) => {
    const started = performance.now();
    let ttfbMs = -1;
    let newlines = 0;
    let bytes = 0;
    const req = http.request(
      job.url,
      { method: 'POST', agent, headers: { ...job.headers, 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(job.body) } },
      (res) => {
        res.on('data', (chunk: Buffer) => {
          if (ttfbMs < 0) ttfbMs = performance.now() - started;
          bytes += chunk.length;
          for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) newlines++;
        });
        res.on('end', () =>
          resolve({
            ok: res.statusCode === 200 && res.complete,
            // Lines minus the header line (no CSV cell of the dataset holds a line break).
            rows: Math.max(0, newlines - 1),
            bytes,
            ttfbMs,
            seconds: (performance.now() - started) / 1000,
          }),
        );
        res.on('error', () => resolve({ ok: false, rows: 0, bytes, ttfbMs, seconds: (performance.now() - started) / 1000 }));
      },
    );
    req.setTimeout(job.timeoutSeconds * 1000, () => req.destroy(new Error('timeout')));
    req.on('error', () => resolve({ ok: false, rows: 0, bytes, ttfbMs, seconds: (performance.now() - started) / 1000 }));
    req.end(job.body);
  });
}

async function exports(job: ExportJob): Promise<ExportResult> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: job.connections });
  const started = performance.now();
  const deadline = started + job.duration * 1000;
  const done: Awaited<ReturnType<typeof oneExport>>[] = [];
  await Promise.all(
    Array.from({ length: job.connections }, async () => {
      do done.push(await oneExport(job, agent));
      while (performance.now() < deadline);
    }),
  );
  const wallSeconds = (performance.now() - started) / 1000;
  agent.destroy();
  const ok = done.filter((d) => d.ok);
  const rows = ok.reduce((s, d) => s + d.rows, 0);
  return {
    kind: 'export',
    exports: ok.length,
    failed: done.length - ok.length,
    rows,
    bytes: ok.reduce((s, d) => s + d.bytes, 0),
    wallSeconds,
    rowsPerSecond: rows / wallSeconds,
    ttfbMs: ok.map((d) => d.ttfbMs),
    exportSeconds: ok.map((d) => d.seconds),
  };
}

const job = JSON.parse(process.argv[2] ?? '{}') as RequestsJob | ExportJob;
const run = job.kind === 'export' ? exports(job) : requests(job);
run.then(
  (result) => {
    process.stdout.write(`${JSON.stringify(result)}\n`);
    process.exit(0);
  },
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
