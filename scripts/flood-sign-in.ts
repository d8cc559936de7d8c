/**
 * What a flood of wrong passwords does to the API (issue 17): the median latency of
 * `GET /api/v1/contracts` while idle, then while eight loops send wrong passwords to
 * next-auth's `/api/auth/callback/credentials`, each one attempt at a time and at most
 * five a second. Runs against a server you started, with public tools only:
 *
 *   npm run build && npm run db:migrate && npm run db:seed
 *   RATE_LIMIT_GENERAL_PER_WINDOW=1000000 AUTH_SECRET=... DATABASE_URL=... REDIS_URL=... npm start
 *   API_KEY=$(npm run --silent apikey -- create --email alice@example.com --name flood | grep -o 'cdapi_[A-Za-z0-9]*') \
 *     npm run flood:sign-in -- --url http://127.0.0.1:3000
 *
 * (The general limit is raised so that the measuring client is never answered 429,
 * which would be faster than a real answer.)
 *
 * Options: --url (http://127.0.0.1:3000), --seconds S per phase (20), --loops N (8),
 * --per-second R per loop (5), --email (alice@example.com, the account the loops guess),
 * --api-rate R API requests a second, one at a time (10).
 *
 * Pass (exit 0) when the API's median under the flood is within 2x of idle, or idle + 10 ms.
 */
import { parseArgs } from 'node:util';
import { runScript, UsageError } from './run-script';

const { values } = parseArgs({
  options: {
    url: { type: 'string', default: 'http://127.0.0.1:3000' },
    seconds: { type: 'string', default: '20' },
    loops: { type: 'string', default: '8' },
    'per-second': { type: 'string', default: '5' },
    email: { type: 'string', default: 'alice@example.com' },
    'api-rate': { type: 'string', default: '10' },
  },
});

const base = values.url.replace(/\/$/, '');
const seconds = Number(values.seconds);
const loops = Number(values.loops);
const perSecond = Number(values['per-second']);
const apiRate = Number(values['api-rate']);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));
const median = (xs: number[]) => {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted.length === 0 ? NaN : sorted[Math.floor((sorted.length - 1) / 2)]!;
};
const quantile = (xs: number[], q: number) => {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
};

/** One API request at a time, `apiRate` a second, until `until`: the latencies of the 200s. */
async function measureApi(key: string, until: number): Promise<{ ms: number[]; statuses: Record<number, number> }> {
  const ms: number[] = [];
  const statuses: Record<number, number> = {};
  while (Date.now() < until) {
    const started = performance.now();
    const res = await fetch(`${base}/api/v1/contracts?limit=20`, { headers: { 'X-API-Key': key } });
    await res.arrayBuffer();
    const took = performance.now() - started;
    statuses[res.status] = (statuses[res.status] ?? 0) + 1;
    if (res.status === 200) ms.push(took);
    await sleep(1000 / apiRate - took);
  }
  return { ms, statuses };
}

/** One loop of wrong passwords: a CSRF token and its cookie, then one attempt at a time, at most `perSecond`. */
async function floodLoop(index: number, until: number, statuses: Record<number, number>, ms: number[]): Promise<void> {
  const csrf = await fetch(`${base}/api/auth/csrf`);
  const cookie = csrf.headers
    .getSetCookie()
    .map((line) => line.split(';')[0])
    .join('; ');
  const { csrfToken } = (await csrf.json()) as { csrfToken: string };
  let attempt = 0;
  while (Date.now() < until) {
    const started = performance.now();
    const res = await fetch(`${base}/api/auth/callback/credentials`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', Cookie: cookie },
      body: new URLSearchParams({ csrfToken, email: values.email, password: `wrong password ${index}.${attempt++}`, callbackUrl: '/' }),
    });
    await res.arrayBuffer();
    const took = performance.now() - started;
    statuses[res.status] = (statuses[res.status] ?? 0) + 1;
    ms.push(took);
    await sleep(1000 / perSecond - took);
  }
}

async function main() {
  const key = process.env.API_KEY;
  if (!key) throw new UsageError('Set API_KEY to a key of the server under test (npm run apikey -- create --email alice@example.com --name flood).');
  if (![seconds, loops, perSecond, apiRate].every((n) => Number.isFinite(n) && n > 0)) throw new UsageError('--seconds, --loops, --per-second and --api-rate must be positive numbers.');

  // Warm-up: the first requests compile and connect.
  await measureApi(key, Date.now() + 3000);

  console.log(`idle: ${seconds} s of API requests, one at a time, ${apiRate} a second …`);
  const idle = await measureApi(key, Date.now() + seconds * 1000);

  console.log(`flood: the same, with ${loops} loops of wrong passwords for ${values.email}, each one at a time and at most ${perSecond} a second …`);
  const until = Date.now() + seconds * 1000;
  const floodStatuses: Record<number, number> = {};
  const floodMs: number[] = [];
  const [flooded] = await Promise.all([
    measureApi(key, until),
    ...Array.from({ length: loops }, (_, i) => floodLoop(i, until, floodStatuses, floodMs)),
  ]);

  const idleP50 = median(idle.ms);
  const floodP50 = median(flooded.ms);
  const bound = Math.max(2 * idleP50, idleP50 + 10);
  const fmt = (n: number) => `${n.toFixed(1)} ms`;
  console.log('');
  console.log(`API GET /api/v1/contracts   idle: p50 ${fmt(idleP50)}, p90 ${fmt(quantile(idle.ms, 0.9))} (${idle.ms.length} answers ${JSON.stringify(idle.statuses)})`);
  console.log(`                       under flood: p50 ${fmt(floodP50)}, p90 ${fmt(quantile(flooded.ms, 0.9))} (${flooded.ms.length} answers ${JSON.stringify(flooded.statuses)})`);
  console.log(`sign-in attempts: ${floodMs.length} (${(floodMs.length / seconds).toFixed(1)} a second), statuses ${JSON.stringify(floodStatuses)}, p50 ${fmt(median(floodMs))}`);
  console.log(`ratio under flood / idle: ${(floodP50 / idleP50).toFixed(2)}; bound max(2 x idle, idle + 10 ms) = ${fmt(bound)}`);
  if (idle.statuses[429] || flooded.statuses[429]) console.log('note: the API answered 429: start the server with a higher RATE_LIMIT_GENERAL_PER_WINDOW');
  if (!(floodP50 <= bound)) {
    console.log('FAIL: the API median under the flood is above the bound');
    process.exitCode = 1;
  } else {
    console.log('PASS');
  }
}

runScript(main);
