import { randomBytes } from 'node:crypto';
import { and, eq } from 'drizzle-orm';
import ICAL from 'ical.js';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { setProcessDatabase, type DatabaseHandle } from '@/db/client';
import { calendarFeeds, contracts, memberships, users, type NewContract } from '@/db/schema';
import { DEMO_ORGS, DEMO_USERS, demoContractId, demoContractRows, seedDemo } from '@/db/seed/demo';
import { createApiKey } from '@/server/api-keys/service';
import { createCalendarFeedHandler } from '@/server/calendar/feed-handler';
import { createCalendarFeed, revokeCalendarFeed } from '@/server/calendar/service';
import { generateFeedToken } from '@/server/calendar/token-format';
import { resetProcessRateLimiter } from '@/server/rate-limit';
import { buildOpenApiDocument } from '@/server/rest/openapi-document';
import { headOf } from '@/server/rest/head';
import { createTestDatabase } from '../helpers/db';
import { createResponseValidator, type ApiResponse } from '../helpers/openapi-validator';

// Failed lookups are counted per client address, read from X-Real-IP here (a proxy's
// header); every request below comes from an address of its own unless a test says
// otherwise, so that only the test of the limit reaches it. Limits are the defaults.
process.env.CLIENT_ADDRESS_HEADER = 'x-real-ip';
delete process.env.TRUSTED_PROXY_HOPS;
delete process.env.RATE_LIMIT_AUTH_FAILURES_PER_MINUTE;
// The limits below are counted exactly: a store slowed by a busy CI machine must not make
// the limiter fail open (its own tests cover that) and let a request through.
process.env.RATE_LIMIT_TIMEOUT_MS = '5000';

const BASE = 'http://localhost:3000';
const ORIGIN = 'https://contracts.example.com';
const HOST = 'contracts.example.com';
// The feed's clock: "today" is 2026-11-22 (UTC), so the window starts on 2025-11-22.
const NOW = new Date('2026-11-22T15:30:00.000Z');
const WINDOW_START = '2025-11-22';

let handle: DatabaseHandle;
let validate: Awaited<ReturnType<typeof createResponseValidator>>;
let clock = NOW;
const handler = createCalendarFeedHandler({ now: () => clock });
const head = headOf(handler);
const tokens: Record<string, string> = {};
const everyToken: string[] = [];
const output: string[] = [];

/** A random IPv6 /64 (the limiter's unit for IPv6), so that no two tests share a bucket. */
const freshAddress = () => `2001:db8:${randomBytes(2).toString('hex')}:${randomBytes(2).toString('hex')}::1`;

async function newFeed(userId: string, name = 'test feed') {
  const created = await createCalendarFeed(handle.db, userId, { name }, ORIGIN);
  const token = created.url.slice(`${ORIGIN}/api/v1/calendar/`.length, -'.ics'.length);
  everyToken.push(token);
  return { ...created, token };
}

beforeAll(async () => {
  handle = await createTestDatabase();
  setProcessDatabase(handle);
  await seedDemo(handle.db);
  for (const user of ['alice', 'bob', 'carol'] as const) tokens[user] = (await newFeed(DEMO_USERS[user].id)).token;
  validate = await createResponseValidator(buildOpenApiDocument(BASE));
  // Everything the process prints, by any route: no token may appear in it.
  const record = (...args: unknown[]) => void output.push(args.map((a) => (a instanceof Error ? `${a.message}\n${a.stack}` : String(a))).join(' '));
  for (const method of ['log', 'info', 'warn', 'error', 'debug', 'trace'] as const) vi.spyOn(console, method).mockImplementation(record);
  for (const stream of [process.stdout, process.stderr]) {
    const write = stream.write.bind(stream);
    vi.spyOn(stream, 'write').mockImplementation(((chunk: unknown, ...rest: unknown[]) => {
      output.push(String(chunk));
      return (write as (...a: unknown[]) => boolean)(chunk, ...rest);
    }) as typeof stream.write);
  }
});
afterAll(async () => {
  vi.restoreAllMocks();
  await resetProcessRateLimiter();
  await handle?.close();
});

interface FeedResponse extends ApiResponse {
  /** The raw body bytes decoded as UTF-8. */
  text: string;
}

/** One request through the handler the route exports, checked against the OpenAPI document. */
async function fetchFeed(
  file: string,
  options: { method?: string; address?: string; headers?: Record<string, string> } = {},
): Promise<FeedResponse> {
  const method = options.method ?? 'GET';
  const headers = new Headers({ 'X-Forwarded-Host': HOST, 'X-Forwarded-Proto': 'https', 'X-Real-IP': options.address ?? freshAddress(), ...options.headers });
  const req = new Request(`${BASE}/api/v1/calendar/${file}`, { method, headers });
  const res = await (method === 'HEAD' ? head(req) : handler(req));
  const text = await res.text();
  const isJson = res.headers.get('content-type')?.startsWith('application/json') && method !== 'HEAD';
  const response = { status: res.status, headers: res.headers, text, json: isJson ? JSON.parse(text) : undefined };
  expect(res.headers.get('x-request-id')).toMatch(/^req_[0-9a-f]{32}$/);
  if (response.json) expect((response.json as { request_id: string }).request_id).toBe(res.headers.get('x-request-id'));
  validate(method === 'HEAD' ? 'GET' : method, `/calendar/${file}`, response);
  return response;
}

interface ParsedEvent {
  uid: string;
  start: string;
  end: string;
  summary: string;
  description: string;
  url: string;
  stamp: string;
}

function parseCalendar(text: string): { calendar: ICAL.Component; events: ParsedEvent[] } {
  const calendar = new ICAL.Component(ICAL.parse(text));
  const events = calendar.getAllSubcomponents('vevent').map((vevent) => {
    const event = new ICAL.Event(vevent);
    expect(event.startDate.isDate).toBe(true);
    expect(event.endDate.isDate).toBe(true);
    return {
      uid: event.uid,
      start: event.startDate.toString(),
      end: event.endDate.toString(),
      summary: event.summary,
      description: event.description,
      url: String(vevent.getFirstPropertyValue('url')),
      stamp: (vevent.getFirstPropertyValue('dtstamp') as ICAL.Time).toJSDate().toISOString(),
    };
  });
  return { calendar, events };
}

const byUid = (a: { uid: string }, b: { uid: string }) => (a.uid < b.uid ? -1 : a.uid > b.uid ? 1 : 0);

/** [contract key, kind, date, summary]: alice's completed contracts (personal and Acme's), read off db/seed/demo.ts by hand. */
const ALICE_EVENTS: [string, 'expiration' | 'renewal', string, string][] = [
  ['alice-1', 'expiration', '2027-03-31', 'Expires: Freelance Design Retainer'],
  ['alice-1', 'renewal', '2027-03-01', 'Renews automatically: Freelance Design Retainer'],
  ['alice-2', 'expiration', '2027-01-15', 'Expires: =HYPERLINK("http://evil.example","Click")'],
  ['alice-3', 'expiration', '2028-08-31', 'Expires: Apartment Lease, "Rue de Rivoli"'],
  ['alice-3', 'renewal', '2028-06-01', 'Renews automatically: Apartment Lease, "Rue de Rivoli"'],
  ['acme-1', 'expiration', '2027-06-30', 'Expires: Salesforce Enterprise Subscription'],
  ['acme-1', 'renewal', '2027-04-01', 'Renews automatically: Salesforce Enterprise Subscription'],
  ['acme-2', 'expiration', '2029-12-31', 'Expires: Office Lease — Berlin'],
  ['acme-2', 'renewal', '2029-06-30', 'Renews: Office Lease — Berlin'],
  ['acme-3', 'expiration', '2027-01-31', 'Expires: Cloud Hosting (AWS) Enterprise Agreement'],
  ['acme-3', 'renewal', '2027-01-01', 'Renews automatically: Cloud Hosting (AWS) Enterprise Agreement'],
  ['acme-4', 'expiration', '2028-03-31', 'Expires: Tokyo Distributor Agreement'],
  ['acme-8', 'expiration', '2026-11-30', 'Expires: Laptop Leasing'],
  ['acme-8', 'renewal', '2026-11-01', 'Renews automatically: Laptop Leasing'],
];

const nextDay = (date: string) => new Date(Date.parse(`${date}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10);

describe('GET /api/v1/calendar/{token}.ics', () => {
  it('answers exactly the hand-computed events of alice, personal and Acme, as an all-day calendar', async () => {
    const res = await fetchFeed(`${tokens.alice}.ics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/calendar; charset=utf-8');
    expect(res.headers.get('cache-control')).toBe('private, max-age=300');
    expect(res.headers.get('content-disposition')).toBe('inline; filename="contracts.ics"');
    expect(res.headers.get('x-ratelimit-limit')).toBeNull();

    const { calendar, events } = parseCalendar(res.text);
    expect(calendar.name).toBe('vcalendar');
    expect(calendar.getFirstPropertyValue('version')).toBe('2.0');
    expect(String(calendar.getFirstPropertyValue('refresh-interval'))).toBe('PT6H');
    expect(res.text).toContain('\r\nX-WR-CALNAME:Contracts\r\n');
    expect(res.text).toContain('\r\nREFRESH-INTERVAL;VALUE=DURATION:PT6H\r\n');
    expect(res.text).toContain('\r\nX-PUBLISHED-TTL:PT6H\r\n');

    const updatedAt = new Map(demoContractRows().map((c) => [c.id!, c.updatedAt!.toISOString()]));
    const expected = ALICE_EVENTS.map(([key, kind, date, summary]) => {
      const id = demoContractId(key);
      return { uid: `${id}-${kind}@${HOST}`, start: date, end: nextDay(date), summary, url: `${ORIGIN}/contracts/${id}`, stamp: updatedAt.get(id)! };
    }).sort(byUid);
    expect(events.map(({ description: _d, ...rest }) => rest).sort(byUid)).toEqual(expected);
  });

  it('describes each event with the parties, value and currency known, and the link back', async () => {
    const { events } = parseCalendar((await fetchFeed(`${tokens.alice}.ics`)).text);
    const salesforce = events.find((e) => e.uid === `${demoContractId('acme-1')}-renewal@${HOST}`)!;
    expect(salesforce.description).toBe(
      `Provider: Salesforce, Inc.\nClient: Acme Corp\nValue: 148,500 USD\nContract: ${ORIGIN}/contracts/${demoContractId('acme-1')}`,
    );
    const formula = events.find((e) => e.uid === `${demoContractId('alice-2')}-expiration@${HOST}`)!;
    expect(formula.description).toBe(
      `Provider: @Provider Ltd\nClient: +Client, Inc.\nValue: 950.50 EUR\nContract: ${ORIGIN}/contracts/${demoContractId('alice-2')}`,
    );
    // bob's custody agreement: auto_renewal unknown (null) is not "automatically".
    const bob = parseCalendar((await fetchFeed(`${tokens.bob}.ics`)).text).events;
    expect(bob.find((e) => e.uid === `${demoContractId('globex-2')}-renewal@${HOST}`)?.summary).toBe('Renews: Swiss Bank Custody Agreement');
    // Completed without any date (bob-2): no event at all.
    expect(bob.some((e) => e.uid.startsWith(demoContractId('bob-2')))).toBe(false);
  });

  it('writes CRLF line ends and lines of at most 75 octets', async () => {
    const { text } = await fetchFeed(`${tokens.bob}.ics`);
    expect(text.startsWith('BEGIN:VCALENDAR\r\n')).toBe(true);
    expect(text.endsWith('END:VCALENDAR\r\n')).toBe(true);
    expect(text.replace(/\r\n/g, '')).not.toMatch(/[\r\n]/);
    for (const line of text.split('\r\n')) expect(Buffer.byteLength(line)).toBeLessThanOrEqual(75);
  });

  it('lists only completed contracts, and only dates from 365 days before today (UTC) onwards', async () => {
    const owner = await insertUser('window');
    const { token } = await newFeed(owner);
    const rows: NewContract[] = [
      contract(owner, { title: 'On the first day', status: 'completed', expirationDate: WINDOW_START, renewalDate: '2025-11-21' }),
      contract(owner, { title: 'Long gone', status: 'completed', expirationDate: '2024-01-01', renewalDate: '2025-01-01' }),
      contract(owner, { title: 'Far ahead', status: 'completed', expirationDate: '2045-06-30', renewalDate: null }),
      contract(owner, { title: 'Still pending', status: 'pending', expirationDate: '2027-01-01', renewalDate: '2026-12-01' }),
      contract(owner, { title: 'Being read', status: 'processing', expirationDate: '2027-01-01', renewalDate: '2026-12-01' }),
      contract(owner, { title: 'Could not read', status: 'failed', expirationDate: '2027-01-01', renewalDate: '2026-12-01' }),
    ];
    await handle.db.insert(contracts).values(rows);
    const { events } = parseCalendar((await fetchFeed(`${token}.ics`)).text);
    expect(events.map((e) => [e.summary, e.start]).sort()).toEqual([
      ['Expires: Far ahead', '2045-06-30'],
      ['Expires: On the first day', '2025-11-22'],
    ]);

    // A day later the first day has left the window.
    clock = new Date('2026-11-23T00:00:00.000Z');
    try {
      const later = parseCalendar((await fetchFeed(`${token}.ics`)).text).events;
      expect(later.map((e) => e.summary)).toEqual(['Expires: Far ahead']);
    } finally {
      clock = NOW;
    }
  });

  it('round-trips titles and parties with commas, semicolons, backslashes, line breaks and non-ASCII text exactly', async () => {
    const owner = await insertUser('hostile');
    const { token } = await newFeed(owner);
    const title = 'Lease; "Büro", Zürich\nFloor 2 \\ Annex — 東京オフィス 🚀 ' + 'très long '.repeat(12);
    const provider = 'Müller & Söhne, GmbH; Abt. "Verträge"';
    const client = 'Client\nwith a line break, and C:\\path';
    await handle.db.insert(contracts).values(
      contract(owner, { title, status: 'completed', expirationDate: '2027-05-01', renewalDate: '2027-04-01', autoRenewal: true, provider, client, contractValue: 1234.5, currency: 'CHF' }),
    );
    const res = await fetchFeed(`${token}.ics`);
    for (const line of res.text.split('\r\n')) expect(Buffer.byteLength(line)).toBeLessThanOrEqual(75);
    const { events } = parseCalendar(res.text);
    expect(events.map((e) => e.summary).sort()).toEqual([`Expires: ${title}`, `Renews automatically: ${title}`]);
    for (const event of events) {
      expect(event.description).toBe(`Provider: ${provider}\nClient: ${client}\nValue: 1,234.50 CHF\nContract: ${event.url}`);
    }
  });

  it('streams every page of a large set, and leaves out contracts whose dates are all before the window', async () => {
    const owner = await insertUser('bulk');
    const { token } = await newFeed(owner);
    const created = (i: number) => new Date(Date.UTC(2026, 0, 1) + i * 60_000);
    // 1,500 contracts with dates in the window first (older), then 2,200 whose dates are
    // years before it (newer): the query leaves those out, and every page the feed reads
    // (1,000 rows) holds events.
    const completed = Array.from({ length: 1500 }, (_, i) =>
      contract(owner, { title: `Bulk ${i}`, status: 'completed', expirationDate: '2027-01-01', renewalDate: i % 2 === 0 ? '2026-12-01' : null, createdAt: created(i) }),
    );
    const pending = Array.from({ length: 2200 }, (_, i) =>
      contract(owner, { title: `Long gone ${i}`, status: 'completed', expirationDate: '2019-06-30', renewalDate: '2019-06-01', createdAt: created(2000 + i) }),
    );
    for (let i = 0; i < completed.length; i += 500) await handle.db.insert(contracts).values(completed.slice(i, i + 500));
    for (let i = 0; i < pending.length; i += 500) await handle.db.insert(contracts).values(pending.slice(i, i + 500));

    const { events } = parseCalendar((await fetchFeed(`${token}.ics`)).text);
    expect(events).toHaveLength(1500 + 750);
    expect(new Set(events.map((e) => e.uid)).size).toBe(2250);
    expect(new Set(events.filter((e) => e.summary.startsWith('Expires: ')).map((e) => e.summary)).size).toBe(1500);
  });

  it('reads the owner\'s organisations at request time: a removed membership drops that organisation\'s events', async () => {
    const owner = await insertUser('member');
    await handle.db.insert(memberships).values({ userId: owner, organizationId: DEMO_ORGS.globex.id });
    const { token } = await newFeed(owner);
    const globex = demoContractRows().filter((c) => c.organizationId === DEMO_ORGS.globex.id).map((c) => c.id!);
    const before = parseCalendar((await fetchFeed(`${token}.ics`)).text).events;
    expect(before.map((e) => e.uid.slice(0, 36)).sort()).toEqual(
      [demoContractId('globex-1'), demoContractId('globex-1'), demoContractId('globex-2'), demoContractId('globex-2')].sort(),
    );
    await handle.db.delete(memberships).where(and(eq(memberships.userId, owner), eq(memberships.organizationId, DEMO_ORGS.globex.id)));
    const after = parseCalendar((await fetchFeed(`${token}.ics`)).text).events;
    expect(after.filter((e) => globex.includes(e.uid.slice(0, 36)))).toEqual([]);
    expect(after).toEqual([]);
  });

  it('answers HEAD like GET without a body, and other methods with the JSON 405', async () => {
    const res = await fetchFeed(`${tokens.carol}.ics`, { method: 'HEAD' });
    expect(res.status).toBe(200);
    expect(res.text).toBe('');
    expect(res.headers.get('content-type')).toBe('text/calendar; charset=utf-8');
    for (const method of ['POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']) {
      const denied = await fetchFeed(`${tokens.carol}.ics`, { method });
      expect(denied.status).toBe(405);
      expect(denied.headers.get('allow')).toBe('GET, HEAD');
      expect(denied.json).toMatchObject({ success: false, error: { code: 'method_not_allowed' } });
    }
  });
});

describe('bad feed addresses', () => {
  it('answers one and the same 404 envelope for every kind of bad token, and for a file that is not .ics', async () => {
    const revoked = await newFeed(DEMO_USERS.carol.id, 'to revoke');
    await revokeCalendarFeed(handle.db, DEMO_USERS.carol.id, revoked.feed.id);
    const apiKey = (await createApiKey(handle.db, DEMO_USERS.alice.id, { name: 'not a feed token', expiresInDays: 7 })).key;
    const valid = tokens.carol!;
    const files = {
      unknown: `${generateFeedToken()}.ics`,
      revoked: `${revoked.token}.ics`,
      'bad checksum': `${valid.slice(0, -1)}${valid.endsWith('A') ? 'B' : 'A'}.ics`,
      truncated: `${valid.slice(0, -6)}.ics`,
      garbage: 'not-a-token.ics',
      'only the suffix': '.ics',
      'an API key': `${apiKey}.ics`,
      // An API key's secret under the feed prefix is well-formed but no feed's token.
      'an API key as cdcal_': `cdcal_${apiKey.slice('cdapi_'.length)}.ics`,
      'no .ics': valid,
      '.ICS': `${valid}.ICS`,
      '.ics.txt': `${valid}.ics.txt`,
      'encoded slash': `${valid}%2F.ics`,
    };
    const bodies = new Set<string>();
    for (const [label, file] of Object.entries(files)) {
      const res = await fetchFeed(file);
      expect(res.status, label).toBe(404);
      expect(res.headers.get('content-type'), label).toBe('application/json; charset=utf-8');
      expect(res.headers.get('cache-control'), label).toBe('no-store');
      const body = res.json as { success: boolean; error: { code: string; message: string; details: unknown[] } };
      expect(body.success, label).toBe(false);
      expect(body.error.code, label).toBe('not_found');
      expect(res.text, label).not.toContain(valid);
      bodies.add(JSON.stringify({ ...body, request_id: undefined }));
    }
    expect(bodies.size).toBe(1);
  });

  it('takes a revocation into account from the next request on', async () => {
    const { token, feed } = await newFeed(DEMO_USERS.alice.id, 'short-lived');
    expect((await fetchFeed(`${token}.ics`)).status).toBe(200);
    await revokeCalendarFeed(handle.db, DEMO_USERS.alice.id, feed.id);
    const res = await fetchFeed(`${token}.ics`);
    expect(res.status).toBe(404);
    expect(res.json).toMatchObject({ error: { code: 'not_found' } });
  });

  it('limits failed lookups per client address: 404 until the limit, then 429, even for a valid token', async () => {
    const address = freshAddress();
    const statuses: number[] = [];
    for (let i = 0; i < 31; i++) statuses.push((await fetchFeed(`${generateFeedToken()}.ics`, { address })).status);
    expect(statuses.slice(0, 30)).toEqual(Array(30).fill(404));
    expect(statuses[30]).toBe(429);
    const blocked = await fetchFeed(`${tokens.alice}.ics`, { address });
    expect(blocked.status).toBe(429);
    expect(blocked.json).toMatchObject({ error: { code: 'rate_limited' } });
    expect(Number(blocked.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    // Other addresses are not affected.
    expect((await fetchFeed(`${tokens.alice}.ics`)).status).toBe(200);
  });
});

describe('reads of one feed', () => {
  it('are limited per feed (60 an hour by default): then 429 with Retry-After, while other feeds are served', async () => {
    const owner = await insertUser('polling');
    const { token } = await newFeed(owner);
    const statuses: number[] = [];
    // From many addresses: the quota belongs to the feed, not to whoever holds its address.
    for (let i = 0; i < 61; i++) statuses.push((await fetchFeed(`${token}.ics`)).status);
    expect(statuses.slice(0, 60).every((s) => s === 200), statuses.join(',')).toBe(true);
    const limited = await fetchFeed(`${token}.ics`);
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect((limited.json as { error: { code: string } }).error.code).toBe('rate_limited');
    expect((await fetchFeed(`${tokens.carol}.ics`)).status).toBe(200);
  });
});

describe('usage and secrecy', () => {
  it('records last_used_at without delaying the answer, at most once a minute', async () => {
    const { token, feed } = await newFeed(DEMO_USERS.bob.id, 'usage');
    const lastUsed = async () => (await handle.db.select({ at: calendarFeeds.lastUsedAt }).from(calendarFeeds).where(eq(calendarFeeds.id, feed.id)))[0]!.at;
    expect(await lastUsed()).toBeNull();
    try {
      await fetchFeed(`${token}.ics`);
      await vi.waitFor(async () => expect(await lastUsed()).toEqual(NOW));
      clock = new Date(NOW.getTime() + 59_000);
      await fetchFeed(`${token}.ics`);
      await new Promise((r) => setTimeout(r, 100));
      expect(await lastUsed()).toEqual(NOW);
      clock = new Date(NOW.getTime() + 60_000);
      await fetchFeed(`${token}.ics`);
      await vi.waitFor(async () => expect(await lastUsed()).toEqual(clock));
    } finally {
      clock = NOW;
    }
  });

  it('answers a database failure with the JSON 500 envelope, logged without the token', async () => {
    // A closed database: PGlite refuses every query, postgres.js reports the ended connection.
    const broken = await createTestDatabase();
    await broken.close();
    setProcessDatabase(broken);
    try {
      const res = await fetchFeed(`${tokens.alice}.ics`);
      expect([500, 503]).toContain(res.status);
      expect(res.json).toMatchObject({ success: false });
      expect(res.text).not.toContain(tokens.alice);
      expect(output.join('\n')).toContain(res.headers.get('x-request-id')!);
    } finally {
      setProcessDatabase(handle);
    }
  });

  it('never prints a feed token, nor its secret part, whatever happened above', () => {
    const printed = output.join('\n');
    expect(everyToken.length).toBeGreaterThan(5);
    for (const token of everyToken) {
      expect(printed).not.toContain(token);
      expect(printed).not.toContain(token.slice('cdcal_'.length, -6));
    }
  });
});

let userCount = 0;
async function insertUser(label: string): Promise<string> {
  const [row] = await handle.db
    .insert(users)
    .values({ email: `calendar-${label}-${++userCount}@example.com`, name: label })
    .returning({ id: users.id });
  return row!.id;
}

function contract(ownerId: string, fields: Partial<NewContract> & { title: string; status: NewContract['status'] }): NewContract {
  return {
    ownerId,
    organizationId: null,
    fileName: 'contract.pdf',
    fileSize: 1000,
    createdAt: new Date('2026-10-01T09:00:00.000Z'),
    updatedAt: new Date('2026-10-01T10:00:00.000Z'),
    ...fields,
  };
}
