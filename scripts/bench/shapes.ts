import http from 'node:http';
import { parseArgs } from 'node:util';
import { SORT_VALUES } from '@/lib/contracts';
import { runScript, UsageError } from '../run-script';
import { COMBINATIONS, filterPairShapes, singleFilterShapes } from './list-shapes';

// End-to-end time of every list shape over HTTP against a running server: what a client
// on the same machine waits for a page with its total (request sent to body read), one
// request at a time on one keep-alive connection. The Postgres side of the same shapes is
// `npm run db:explain -- --summary`; the difference is the server's own work and the wire.
//
// Usage (the key in the environment, never on the command line, where `ps` would show it):
//   CDA_API_KEY=cdapi_… npm run bench:shapes -- --base-url http://127.0.0.1:3000 [--runs 7] [--org <uuid>] [--only 'q='] [--pairs]
// --pairs adds every pair of two filters (list-shapes.ts) after the single filters.
// The key's rate limit must allow (runs + 1) requests per shape, about 900 at --runs 7:
// start the server with RATE_LIMIT_GENERAL_PER_WINDOW raised for the measurement.
const USAGE = "CDA_API_KEY=… npm run bench:shapes -- --base-url http://127.0.0.1:3000 [--runs 7] [--org <uuid>] [--only <substring>] [--pairs]";

interface Timing {
  query: string;
  medianMs: number;
  maxMs: number;
  total: number | null;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

// node:http on one keep-alive socket: Node 20's fetch added 4 to 5 ms to every request here
// (a 404 took 5.6 ms by fetch and 1.6 ms by node:http, measured back to back).
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });

function get(url: string, headers: Record<string, string> = {}): Promise<{ status: number; text: string; ms: number }> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const request = http.get(url, { agent, headers }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8'), ms: performance.now() - started }));
      response.on('error', reject);
    });
    request.setTimeout(30_000, () => request.destroy(new Error(`GET ${url} took over 30 s`)));
    request.on('error', reject);
  });
}

async function timedGet(url: string, key: string): Promise<{ ms: number; body: { data?: { pagination?: { total?: number } } } }> {
  const { status, text, ms } = await get(url, { 'X-API-Key': key });
  if (status !== 200) {
    const hint = status === 429 ? ' (raise RATE_LIMIT_GENERAL_PER_WINDOW on the server for the measurement)' : '';
    throw new Error(`GET ${new URL(url).search || '/'} answered ${status}${hint}: ${text.slice(0, 300)}`);
  }
  return { ms, body: JSON.parse(text) };
}

/** An organisation of the caller, from the first page of each sort (the newest contracts may all be personal). */
async function someOrganization(baseUrl: string, key: string): Promise<string | undefined> {
  for (const sort of ['', ...SORT_VALUES.map((s) => `&sort=${s}`)]) {
    const { body } = await timedGet(`${baseUrl}/api/v1/contracts?limit=100${sort}`, key);
    const found = (body.data as { contracts: { organization_id: string | null }[] }).contracts.find((c) => c.organization_id);
    if (found) return found.organization_id!;
  }
  return undefined;
}

/**
 * The median time of a request to a path the API does not have (404 in the API's envelope,
 * no key checked, nothing counted): the server's and the wire's own cost at this moment.
 * Not a 401: failed keys are counted per client address and soon answered 429.
 */
async function noSuchPathMs(baseUrl: string, runs: number): Promise<number> {
  const samples: number[] = [];
  const warmUp = 20; // a fresh server compiles its route on the first requests
  for (let i = 0; i < warmUp + runs; i++) {
    const { status, ms } = await get(`${baseUrl}/api/v1/no-such-path`);
    if (status !== 404) throw new Error(`GET /api/v1/no-such-path answered ${status}, not 404`);
    if (i >= warmUp) samples.push(ms);
  }
  return median(samples);
}

async function timeShape(baseUrl: string, key: string, query: string, runs: number): Promise<Timing> {
  const url = `${baseUrl}/api/v1/contracts${query ? `?${query}` : ''}`;
  const first = await timedGet(url, key); // warms the statement on this connection
  const samples: number[] = [];
  for (let i = 0; i < runs; i++) samples.push((await timedGet(url, key)).ms);
  return { query, medianMs: median(samples), maxMs: Math.max(...samples), total: first.body.data?.pagination?.total ?? null };
}

runScript(async () => {
  const { values } = parseArgs({
    options: {
      'base-url': { type: 'string' },
      runs: { type: 'string', default: '7' },
      org: { type: 'string' },
      only: { type: 'string' },
      pairs: { type: 'boolean', default: false },
    },
  });
  const key = process.env.CDA_API_KEY;
  if (!key) throw new UsageError(`CDA_API_KEY is not set\n${USAGE}`);
  const baseUrl = values['base-url']?.replace(/\/+$/, '');
  if (!baseUrl || !/^http:\/\//.test(baseUrl)) throw new UsageError(`--base-url must be the server's origin over plain http (http://…; measure next to the server, not through TLS)\n${USAGE}`);
  const runs = Number(values.runs);
  if (!Number.isInteger(runs) || runs < 1 || runs > 101) throw new UsageError(`--runs must be a whole number from 1 to 101\n${USAGE}`);

  const org = values.org ?? (await someOrganization(baseUrl, key));
  const shapes = [...singleFilterShapes().map((q) => ({ q, single: true })), ...COMBINATIONS.map((q) => ({ q, single: false })), ...(values.pairs ? filterPairShapes() : []).map((q) => ({ q, single: false }))]
    .filter(({ q }) => !q.includes('{org}') || org)
    .map(({ q, single }) => ({ query: q.replace('{org}', org ?? ''), single }))
    .filter(({ query }) => values.only === undefined || query.includes(values.only));

  console.log(`${baseUrl}, one connection, median of ${runs} requests after one warm-up (ms, client side: request sent to body read)`);
  console.log(`A request for a path the API does not have (404) takes ${(await noSuchPathMs(baseUrl, runs)).toFixed(2)} ms: the server's and the wire's floor now\n`);
  console.log('| Query | total | median ms | max ms |\n| --- | --- | --- | --- |');
  const single: Timing[] = [];
  let worstOther: Timing | undefined;
  for (const { query, single: isSingle } of shapes) {
    const t = await timeShape(baseUrl, key, query, runs);
    if (isSingle) single.push(t);
    else if (!worstOther || t.medianMs > worstOther.medianMs) worstOther = t;
    console.log(`| \`${(org ? t.query.replace(org, '{org}') : t.query) || '(none)'}\` | ${t.total ?? ''} | ${t.medianMs.toFixed(2)} | ${t.maxMs.toFixed(2)} |`);
  }
  const within = (ms: number) => single.filter((t) => t.medianMs <= ms).length;
  console.log(`\nSingle-filter shapes: ${single.length}; median within 5 ms: ${within(5)}, within 10 ms: ${within(10)}, within 50 ms: ${within(50)}`);
  if (worstOther) console.log(`\nSlowest combination: \`${org ? worstOther.query.replace(org, '{org}') : worstOther.query}\` ${worstOther.medianMs.toFixed(1)} ms`);
  if (single.length === 0) return;
  const worst = [...single].sort((a, b) => b.medianMs - a.medianMs).slice(0, 5);
  console.log(`Slowest: ${worst.map((t) => `\`${t.query || '(none)'}\` ${t.medianMs.toFixed(1)} ms`).join(', ')}`);
});
