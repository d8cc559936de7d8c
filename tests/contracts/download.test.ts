import { randomUUID } from 'node:crypto';
import net from 'node:net';
import Papa from 'papaparse';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { openPostgres, type DatabaseHandle } from '@/db/client';
import { memberships, users } from '@/db/schema';
import { DEMO_ORGS, seedDemo } from '@/db/seed/demo';
import type { SessionUser } from '@/server/auth/session';
import { safeCallbackUrl } from '@/server/auth/callback-url';
import { serveContractsDownload } from '@/server/contracts/download';
import { setProcessDatabase } from '@/server/database';
import { apiRequest, PROXY_CLIENT_ADDRESS, send } from '../helpers/api';
import { applyConfig, configureForFile } from '../helpers/config';
import { captureLogs } from '../helpers/logs';
import { createTestDatabase } from '../helpers/db';
import { newApiKey } from '../helpers/tokens';

/**
 * The contracts page's "Download CSV" (GET /contracts/export), called as the App Router
 * calls it with the signed-in user: the API's export of the page's list, through the
 * session, with its own quota per user, and every answer that is not the file one a
 * person can act on (a redirect to the list or to sign-in, a short HTML page).
 *
 * Every test has a user of its own (a member of Acme Corp), so that quotas counted in a
 * shared Redis start empty on every run.
 */

const EXPORT_LIMIT = 3;
configureForFile({ ...PROXY_CLIENT_ADDRESS, RATE_LIMIT_EXPORT_PER_WINDOW: String(EXPORT_LIMIT), RATE_LIMIT_GENERAL_PER_WINDOW: '100000' });

const ORIGIN = 'http://localhost:3000';
let handle: DatabaseHandle;

beforeAll(async () => {
  handle = await createTestDatabase();
  setProcessDatabase(handle);
  await seedDemo(handle.db);
});
afterAll(async () => handle?.close());

/** A new user who is a member of Acme Corp (and has no personal contracts). */
async function acmeMember(): Promise<SessionUser> {
  const id = randomUUID();
  const email = `download-${id}@example.com`;
  await handle.db.insert(users).values({ id, email, name: 'Download test' });
  await handle.db.insert(memberships).values({ userId: id, organizationId: DEMO_ORGS.acme.id, role: 'member' });
  return { id, email, name: 'Download test' };
}

/** A click on the page's link: a same-origin navigation. */
function download(query: string, headers: Record<string, string> = { 'Sec-Fetch-Site': 'same-origin', 'Sec-Fetch-Mode': 'navigate' }): Request {
  return new Request(`${ORIGIN}/contracts/export${query}`, { headers: { Host: 'localhost:3000', ...headers } });
}

async function read(res: Response) {
  // Decoded keeping the byte order mark (Response.text() drops it).
  const text = new TextDecoder('utf-8', { ignoreBOM: true }).decode(await res.arrayBuffer());
  return { status: res.status, headers: res.headers, text };
}

const rowsOf = (csv: string) => Papa.parse<string[]>(csv.replace(/^\uFEFF/, ''), { skipEmptyLines: true }).data;

describe('the file', () => {
  it('is the API export of the same filters and sort, with a byte order mark for Excel', async () => {
    const user = await acmeMember();
    const { key } = await newApiKey(handle.db, user.id);
    const res = await read(await serveContractsDownload(download('?status=completed&sort=expiration_date'), user));
    expect(res.status, res.text.slice(0, 300)).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(res.headers.get('content-disposition')).toMatch(/^attachment; filename="contracts-\d{4}-\d{2}-\d{2}\.csv"$/);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.text.startsWith('\uFEFFid,title,status,')).toBe(true);

    const api = await send(
      apiRequest('POST', '/contracts/export', { key, body: JSON.stringify({ status: 'completed', sort: 'expiration_date', bom: true }) }),
    );
    expect(api.status).toBe(200);
    expect(res.text).toBe(api.text);
    const rows = rowsOf(res.text);
    expect(rows.length).toBeGreaterThan(2);
    // Expiring soonest first, every row completed, Acme's only.
    const expirations = rows.slice(1).map((r) => r[8]!).filter(Boolean);
    expect(expirations).toEqual([...expirations].sort());
    expect(new Set(rows.slice(1).map((r) => r[2]))).toEqual(new Set(['completed']));
    expect(new Set(rows.slice(1).map((r) => r[7]))).toEqual(new Set([DEMO_ORGS.acme.id]));
  });

  it('holds every matching contract: the page’s limit and offset neither apply nor fail', async () => {
    const user = await acmeMember();
    const whole = await read(await serveContractsDownload(download('?sort=title'), user));
    const paged = await read(await serveContractsDownload(download('?sort=title&limit=2&offset=4'), user));
    const bad = await read(await serveContractsDownload(download('?sort=title&limit=5000&offset=-1'), user));
    expect([whole.status, paged.status, bad.status]).toEqual([200, 200, 200]);
    expect(rowsOf(whole.text).length).toBeGreaterThan(3);
    expect(paged.text).toBe(whole.text);
    expect(bad.text).toBe(whole.text);
  });

  it('counts against a quota per user, answered by a readable page once used up', async () => {
    const user = await acmeMember();
    const other = await acmeMember();
    for (let i = 0; i < EXPORT_LIMIT; i++) {
      const res = await serveContractsDownload(download('?status=completed'), user);
      expect(res.status).toBe(200);
      expect(res.headers.get('x-ratelimit-remaining')).toBe(String(EXPORT_LIMIT - 1 - i));
      await res.body?.cancel();
    }
    const refused = await read(await serveContractsDownload(download('?status=completed'), user));
    expect(refused.status).toBe(429);
    expect(refused.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(refused.text).toContain('<h1>Download limit reached</h1>');
    expect(refused.text).toContain(`downloaded ${EXPORT_LIMIT} times per hour`);
    expect(refused.text).toContain('<a href="/contracts?status=completed">Back to the contracts</a>');
    // Another user's quota, and the user's own API keys, are not touched.
    expect((await serveContractsDownload(download(''), other)).status).toBe(200);
    const { key } = await newApiKey(handle.db, user.id);
    expect((await send(apiRequest('POST', '/contracts/export', { key }))).status).toBe(200);
  });
});

describe('answers a browser can follow', () => {
  it('signed out: to sign-in, coming back to the list with the same filters', async () => {
    const res = await serveContractsDownload(download('?status=pending&q=a%26b&x=//evil.example'), undefined);
    expect(res.status).toBe(303);
    const location = res.headers.get('location')!;
    // Relative: no Host header chooses where the browser goes.
    expect(location.startsWith('/sign-in?callbackUrl=')).toBe(true);
    const callback = new URL(location, ORIGIN).searchParams.get('callbackUrl');
    expect(callback).toBe('/contracts?status=pending&q=a%26b&x=%2F%2Fevil.example');
    // The sign-in page keeps it: a path of this site.
    expect(safeCallbackUrl(callback)).toBe(callback);
  });

  it('started by another site: to the list, nothing read or counted', async () => {
    const user = await acmeMember();
    const crossSite: Record<string, string>[] = [
      { 'Sec-Fetch-Site': 'cross-site', 'Sec-Fetch-Mode': 'navigate' },
      { 'Sec-Fetch-Site': 'same-site', 'Sec-Fetch-Mode': 'navigate' },
      // A browser without Fetch Metadata still names the other site in Referer.
      { Referer: 'https://evil.example/' },
      { Referer: 'http://localhost:3000.evil.example/' },
    ];
    for (const headers of crossSite) {
      for (let i = 0; i <= EXPORT_LIMIT; i++) {
        const res = await serveContractsDownload(download('?status=completed', headers), user);
        expect(res.status, JSON.stringify(headers)).toBe(303);
        expect(res.headers.get('location')).toBe('/contracts?status=completed');
        expect(res.body).toBeNull();
      }
    }
    // The quota is whole: a typed address (none), the page's own link and a bookmark in an old browser download.
    const ownSite: Record<string, string>[] = [{ 'Sec-Fetch-Site': 'none' }, { 'Sec-Fetch-Site': 'same-origin' }, { Referer: `${ORIGIN}/contracts` }];
    for (const headers of ownSite) {
      const res = await serveContractsDownload(download('?status=completed', headers), user);
      expect(res.status, JSON.stringify(headers)).toBe(200);
      expect(res.headers.get('x-ratelimit-remaining')).not.toBeNull();
      await res.body?.cancel();
    }
  });

  it('a parameter the page would refuse: back to the list, which says why; nothing counted', async () => {
    const user = await acmeMember();
    for (const query of ['?status=archived', `?organization_id=${DEMO_ORGS.globex.id}`, '?status=pending&status=failed', '?expires_before=2027-02-30']) {
      for (let i = 0; i <= EXPORT_LIMIT; i++) {
        const res = await serveContractsDownload(download(query), user);
        expect(res.status, query).toBe(303);
        expect(res.headers.get('location')).toBe(`/contracts${query}`);
      }
    }
    expect((await serveContractsDownload(download(`?organization_id=${DEMO_ORGS.acme.id}`), user)).status).toBe(200);
  });

  it('an unknown parameter is ignored, as the page ignores it', async () => {
    const user = await acmeMember();
    const plain = await read(await serveContractsDownload(download('?status=completed'), user));
    const extra = await read(await serveContractsDownload(download('?status=completed&utm_source=mail'), user));
    expect(extra.status).toBe(200);
    expect(extra.text).toBe(plain.text);
  });
});

describe('a database that does not answer', () => {
  let silent: net.Server;
  let stuck: DatabaseHandle;
  const sockets = new Set<net.Socket>();

  beforeAll(async () => {
    // Accepts connections and never answers: past the request deadline the download gives up.
    silent = net.createServer((socket) => {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const { port } = silent.address() as net.AddressInfo;
    stuck = await openPostgres(`postgres://postgres@127.0.0.1:${port}/none`, { max: 1, prepare: false });
    await applyConfig({ REQUEST_DEADLINE_MS: '300' });
    setProcessDatabase(stuck);
  });
  afterAll(async () => {
    setProcessDatabase(handle);
    // No new connections, the open ones cut: the pool's waiting query fails and it can close.
    const closed = new Promise((resolve) => silent.close(resolve));
    for (const socket of sockets) socket.destroy();
    const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
    await Promise.race([stuck?.close().catch(() => {}), pause(2_000)]);
    await Promise.race([closed, pause(2_000)]);
  });

  it('answers a readable 503 page within the deadline, not a hanging tab', async () => {
    const logs = captureLogs('silent'); // the expected errors, kept off the output
    onTestFinished(() => logs.restore());
    const user = await acmeMember().catch(() => ({ id: randomUUID(), email: 'x@example.com', name: null }));
    const started = performance.now();
    const res = await read(await serveContractsDownload(download('?status=completed'), user));
    const ms = performance.now() - started;
    expect(res.status).toBe(503);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(res.headers.get('retry-after')).toBe('5');
    expect(res.text).toContain('<h1>The download could not start</h1>');
    expect(res.text).toContain('temporarily unavailable');
    expect(ms).toBeLessThan(3_000);
  });
});
