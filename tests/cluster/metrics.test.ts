import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_USERS } from '@/db/seed/demo';
import { instancePort, instanceNumbers, metricsTokenFile } from '@/scripts/cluster/instances';
import { parseScrape, type Scrape } from '../helpers/prometheus';
import { cluster, mintKey, request, revokeKey, type Cluster } from './support';

/**
 * The cluster's three instances as Prometheus scrapes them (docs/operations.md, "Scraping
 * the local cluster"): each one directly, with the token of `.data/cluster/metrics-token`;
 * together they count every request the balancer handed them.
 */

let c: Cluster;
let token: string;
let key: { key: string; id: string };
beforeAll(async () => {
  c = cluster();
  token = readFileSync(metricsTokenFile(c.state), 'utf8');
  key = await mintKey(c, DEMO_USERS.bob.email, 'cluster metrics');
});
afterAll(async () => {
  if (key) await revokeKey(c, key.id).catch(() => {});
});

// The wrong token's failed attempts count against an address of their own (the instances
// trust one proxy hop): on the shared one they would use up the failed-attempt allowance
// that the later files' valid keys are served under (their requests answered 429).
const GUESSER = { 'x-forwarded-for': '198.51.100.77' };

async function scrapeInstance(n: number, authorization = `Bearer ${token}`, extra: Record<string, string> = {}): Promise<{ status: number; scrape?: Scrape; wwwAuthenticate: string | null }> {
  const res = await fetch(`http://127.0.0.1:${instancePort(c.state, n)}/api/metrics`, { headers: { authorization, ...extra } });
  const text = await res.text();
  return { status: res.status, scrape: res.status === 200 ? parseScrape(text) : undefined, wwwAuthenticate: res.headers.get('www-authenticate') };
}

const listCount = (s: Scrape) => s.value('http_server_request_duration_seconds_count', { route: '/api/v1/contracts', method: 'GET', status_class: '2xx' });

describe('scraping the cluster', () => {
  it('serves each instance its metrics with the token, and a 401 without it', async () => {
    for (const n of instanceNumbers(c.state)) {
      const wrong = await scrapeInstance(n, 'Bearer not-the-token', GUESSER);
      expect(wrong.status).toBe(401);
      expect(wrong.wwwAuthenticate).toBe('Bearer realm="metrics"');
      const { status, scrape } = await scrapeInstance(n);
      expect(status).toBe(200);
      expect(scrape!.value('db_pool_connections_max', { pool: 'primary' })).toBeGreaterThan(0);
      expect(scrape!.has('webhook_queue_depth', { queue: 'deliveries' })).toBe(true);
      // Behind PgBouncer with the replica in use (watched from the first read or scrape on), caught up.
      await expect.poll(async () => (await scrapeInstance(n)).scrape!.value('db_replica_in_use', { pool: 'replica' }), { timeout: 10_000 }).toBe(1);
      expect((await scrapeInstance(n)).scrape!.value('db_replica_lag_seconds', { pool: 'replica' })).toBeLessThan(2);
    }
  });

  it('counts, over the three instances, every request sent through the balancer', async () => {
    const scrapeAll = async () => Promise.all(instanceNumbers(c.state).map(async (n) => (await scrapeInstance(n)).scrape!));
    const before = await scrapeAll();
    const answers = await Promise.all(Array.from({ length: 30 }, () => request(c, '/api/v1/contracts?limit=3', { headers: { 'x-api-key': key.key } })));
    expect(answers.map((a) => a.status)).toEqual(answers.map(() => 200));
    const after = await scrapeAll();
    const sent = after.reduce((sum, s, i) => sum + listCount(s) - listCount(before[i]!), 0);
    expect(sent).toBe(30);
  });
});
