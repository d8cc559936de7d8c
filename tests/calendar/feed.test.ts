import { randomBytes } from 'node:crypto';
import { and, eq } from 'drizzle-orm';
import ICAL from 'ical.js';
import { afterAll, beforeAll, describe, expect, it, onTestFinished, vi } from 'vitest';
import type { DatabaseHandle } from '@/db/client';
import { setProcessDatabase } from '@/server/database';
import { accessTokens, contracts, memberships, users, type NewContract } from '@/db/schema';
import { DEMO_ORGS, DEMO_USERS, demoContractId, demoContractRows, seedDemo } from '@/db/seed/demo';
import { createCalendarFeed } from '@/server/access/keys';
import { TOKEN_FORMATS } from '@/server/access/token-format';
import { weakEtag } from '@/server/http/conditional';
import { buildOpenApiDocument } from '@/server/rest/openapi-document';
import { FEED_BUFFER } from '@/server/rest/calendar-feed';
import { handleApiRequest } from '@/server/rest/router';
import { PROXY_CLIENT_ADDRESS } from '../helpers/api';
import { configureForFile } from '../helpers/config';
import { captureLogs, type CapturedLogs } from '../helpers/logs';
import { createTestDatabase } from '../helpers/db';
import { createResponseValidator, type ApiResponse } from '../helpers/openapi-validator';
import { newApiKey, newFeedToken, revokeFeedToken } from '../helpers/tokens';

// Failed lookups are counted per client address, read from X-Real-IP here (a proxy's
// header); every request below comes from an address of its own unless a test says
// otherwise, so that only the test of the limit reaches it. Limits are the defaults.
// The limits below are counted exactly: a store slowed by a busy CI machine must not make
// the limiter fail open (its own tests cover that) and let a request through.
configureForFile({ ...PROXY_CLIENT_ADDRESS, RATE_LIMIT_AUTH_FAILURES_PER_MINUTE: undefined, RATE_LIMIT_TIMEOUT_MS: '5000' });

const BASE = 'http://localhost:3000';
const ORIGIN = 'https://contracts.example.com';
const HOST = 'contracts.example.com';
// The feed's clock: "today" is 2026-11-22 (UTC), so the window starts on 2025-11-22.
const NOW = new Date('2026-11-22T15:30:00.000Z');
const WINDOW_START = '2025-11-22';

let handle: DatabaseHandle;
let validate: Awaited<ReturnType<typeof createResponseValidator>>;
/** The feed's clock: only Date is faked, timers stay real. */
const setClock = (at: Date) => vi.setSystemTime(at);
const tokens: Record<string, string> = {};
const everyToken: string[] = [];
const output: string[] = [];
let logs: CapturedLogs | undefined;

/** A random IPv6 /64 (the limiter's unit for IPv6), so that no two tests share a bucket. */
const freshAddress = () => `2001:db8:${randomBytes(2).toString('hex')}:${randomBytes(2).toString('hex')}::1`;

async function newFeed(userId: string, name = 'test feed') {
  const created = await newFeedToken(handle.db, userId, name);
  everyToken.push(created.token);
  return created;
}

beforeAll(async () => {
  vi.useFakeTimers({ toFake: ['Date'] });
  setClock(NOW);
  handle = await createTestDatabase();
  setProcessDatabase(handle);
  await seedDemo(handle.db);
  for (const user of ['alice', 'bob', 'carol'] as const) tokens[user] = (await newFeed(DEMO_USERS[user].id)).token;
  validate = await createResponseValidator(buildOpenApiDocument(BASE));
  // Everything the process prints, by any route: no token may appear in it.
  const record = (...args: unknown[]) => void output.push(args.map((a) => (a instanceof Error ? `${a.message}\n${a.stack}` : String(a))).join(' '));
  for (const method of ['log', 'info', 'warn', 'error', 'debug', 'trace'] as const) vi.spyOn(console, method).mockImplementation(record);
  logs = captureLogs('trace', output);
  for (const stream of [process.stdout, process.stderr]) {
    const write = stream.write.bind(stream);
    vi.spyOn(stream, 'write').mockImplementation(((chunk: unknown, ...rest: unknown[]) => {
      output.push(String(chunk));
      return (write as (...a: unknown[]) => boolean)(chunk, ...rest);
    }) as typeof stream.write);
  }
});
afterAll(async () => {
  logs?.restore();
  vi.restoreAllMocks();
  vi.useRealTimers();
  await handle?.close();
});

interface FeedResponse extends ApiResponse {
  /** The raw body bytes decoded as UTF-8. */
  text: string;
}

/** One request through the API's router, checked against the OpenAPI document. */
async function fetchFeed(
  file: string,
  options: { method?: string; address?: string; headers?: Record<string, string> } = {},
): Promise<FeedResponse> {
  const method = options.method ?? 'GET';
  const headers = new Headers({ 'X-Forwarded-Host': HOST, 'X-Forwarded-Proto': 'https', 'X-Real-IP': options.address ?? freshAddress(), ...options.headers });
  const req = new Request(`${BASE}/api/v1/calendar/${file}`, { method, headers });
  const res = await handleApiRequest(req);
  const text = await res.text();
  const isJson = res.headers.get('content-type')?.startsWith('application/json') && method !== 'HEAD';
  const response = { status: res.status, headers: res.headers, text, json: isJson ? JSON.parse(text) : undefined };
  expect(res.headers.get('x-request-id')).toMatch(/^req_[0-9a-f]{32}$/);
  if (response.json) expect((response.json as { request_id: string }).request_id).toBe(res.headers.get('x-request-id'));
  validate(method, `/calendar/${file}`, response);
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

/**
 * [contract key, kind, date, summary]: alice's completed contracts (personal and Acme's),
 * read off db/seed/demo.ts by hand: renewals at their next date (acme-8, yearly since
 * 2023-11-01, renewed on 2026-11-01 for a year), notice deadlines at renewal − notice period.
 */
const ALICE_EVENTS: [string, 'expiration' | 'renewal' | 'notice', string, string][] = [
  ['alice-1', 'expiration', '2027-03-31', 'Expires: Freelance Design Retainer'],
  ['alice-1', 'renewal', '2027-03-01', 'Renews automatically: Freelance Design Retainer'],
  ['alice-1', 'notice', '2027-01-30', 'Give notice by: Freelance Design Retainer'],
  ['alice-2', 'expiration', '2027-01-15', 'Expires: =HYPERLINK("http://evil.example","Click")'],
  ['alice-3', 'expiration', '2028-08-31', 'Expires: Apartment Lease, "Rue de Rivoli"'],
  ['alice-3', 'renewal', '2028-06-01', 'Renews automatically: Apartment Lease, "Rue de Rivoli"'],
  ['alice-3', 'notice', '2028-03-01', 'Give notice by: Apartment Lease, "Rue de Rivoli"'],
  ['acme-1', 'expiration', '2027-06-30', 'Expires: Salesforce Enterprise Subscription'],
  ['acme-1', 'renewal', '2027-04-01', 'Renews automatically: Salesforce Enterprise Subscription'],
  ['acme-1', 'notice', '2027-01-01', 'Give notice by: Salesforce Enterprise Subscription'],
  ['acme-2', 'expiration', '2029-12-31', 'Expires: Office Lease — Berlin'],
  ['acme-2', 'renewal', '2029-06-30', 'Renews: Office Lease — Berlin'],
  ['acme-3', 'expiration', '2027-01-31', 'Expires: Cloud Hosting (AWS) Enterprise Agreement'],
  ['acme-3', 'renewal', '2027-01-01', 'Renews automatically: Cloud Hosting (AWS) Enterprise Agreement'],
  ['acme-3', 'notice', '2026-11-02', 'Give notice by: Cloud Hosting (AWS) Enterprise Agreement'],
  ['acme-4', 'expiration', '2028-03-31', 'Expires: Tokyo Distributor Agreement'],
  ['acme-8', 'expiration', '2026-11-30', 'Expires: Laptop Leasing'],
  ['acme-8', 'renewal', '2027-11-01', 'Renews automatically: Laptop Leasing'],
  ['acme-8', 'notice', '2027-08-01', 'Give notice by: Laptop Leasing'],
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
      return { uid: `${id}-${kind}@contract-data-api`, start: date, end: nextDay(date), summary, url: `${ORIGIN}/contracts/${id}`, stamp: updatedAt.get(id)! };
    }).sort(byUid);
    expect(events.map(({ description: _d, ...rest }) => rest).sort(byUid)).toEqual(expected);
  });

  it('describes each event with the parties, value and currency known, and the link back', async () => {
    const { events } = parseCalendar((await fetchFeed(`${tokens.alice}.ics`)).text);
    const salesforce = events.find((e) => e.uid === `${demoContractId('acme-1')}-renewal@contract-data-api`)!;
    expect(salesforce.description).toBe(
      `Provider: Salesforce, Inc.\nClient: Acme Corp\nValue: 148,500 USD\nContract: ${ORIGIN}/contracts/${demoContractId('acme-1')}`,
    );
    const formula = events.find((e) => e.uid === `${demoContractId('alice-2')}-expiration@contract-data-api`)!;
    expect(formula.description).toBe(
      `Provider: @Provider Ltd\nClient: +Client, Inc.\nValue: 950.50 EUR\nContract: ${ORIGIN}/contracts/${demoContractId('alice-2')}`,
    );
    // bob's custody agreement: auto_renewal unknown (null) is not "automatically".
    const bob = parseCalendar((await fetchFeed(`${tokens.bob}.ics`)).text).events;
    expect(bob.find((e) => e.uid === `${demoContractId('globex-2')}-renewal@contract-data-api`)?.summary).toBe('Renews: Swiss Bank Custody Agreement');
    // Completed without any date (bob-2): no event at all.
    expect(bob.some((e) => e.uid.startsWith(demoContractId('bob-2')))).toBe(false);
  });

  it('gives each notice deadline a reminder two weeks before, says what the notice stops, and moves an evergreen contract\'s events to its next term under the same UIDs', async () => {
    const owner = await insertUser('notice');
    const { token } = await newFeed(owner);
    // Monthly since 2025-01-31, 10 days' notice: on 2026-11-22 the next renewal is 2026-11-30, act by 2026-11-20 (passed, still listed).
    await handle.db.insert(contracts).values(
      contract(owner, { title: 'Monthly support', status: 'completed', renewalDate: '2025-01-31', autoRenewal: true, renewalTerm: 'P1M', noticePeriod: 'P10D' }),
    );
    const first = await fetchFeed(`${token}.ics`);
    const events = parseCalendar(first.text).events;
    expect(events.map((e) => [e.summary, e.start]).sort()).toEqual([
      ['Give notice by: Monthly support', '2026-11-20'],
      ['Renews automatically: Monthly support', '2026-11-30'],
    ]);
    const notice = events.find((e) => e.summary.startsWith('Give notice'))!;
    expect(notice.description.split('\n').slice(0, 2)).toEqual(['Notice stops the renewal on 2026-11-30, which would start another term of 1 month.', 'Notice period: 10 days']);
    const vevent = new ICAL.Component(ICAL.parse(first.text)).getAllSubcomponents('vevent').find((v) => v.getFirstPropertyValue('uid') === notice.uid)!;
    const alarm = vevent.getFirstSubcomponent('valarm')!;
    expect(alarm.getFirstPropertyValue('action')).toBe('DISPLAY');
    expect(String(alarm.getFirstPropertyValue('trigger'))).toBe('-P14D');
    // The owner's choice when creating the feed: 3 days before; more than 60 is refused, and only a feed has one.
    const chosen = await createCalendarFeed(handle.db, owner, { name: 'three days', noticeReminderDays: 3 });
    everyToken.push(chosen.secret);
    const threeDays = new ICAL.Component(ICAL.parse((await fetchFeed(`${chosen.secret}.ics`)).text))
      .getAllSubcomponents('vevent')
      .find((v) => v.getFirstPropertyValue('uid') === notice.uid)!;
    expect(String(threeDays.getFirstSubcomponent('valarm')!.getFirstPropertyValue('trigger'))).toBe('-P3D');
    await expect(createCalendarFeed(handle.db, owner, { name: 'too early', noticeReminderDays: 61 })).rejects.toMatchObject({ code: 'invalid_request' });
    const apiKey = await newApiKey(handle.db, owner);
    await expect(handle.query(`UPDATE access_tokens SET notice_reminder_days = 7 WHERE id = $1`, [apiKey.id])).rejects.toThrow(/access_tokens_notice_reminder_days/);
    // The renewal passes: a day later the same two events (same UIDs) stand at the next term, 2026-12-31 (from the 31st again).
    setClock(new Date('2026-12-01T06:00:00.000Z'));
    try {
      const later = parseCalendar((await fetchFeed(`${token}.ics`)).text).events;
      expect(later.map((e) => [e.uid, e.start]).sort()).toEqual(events.map((e) => [e.uid, e.summary.startsWith('Give') ? '2026-12-21' : '2026-12-31']).sort());
    } finally {
      setClock(NOW);
    }
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
    setClock(new Date('2026-11-23T00:00:00.000Z'));
    try {
      const later = parseCalendar((await fetchFeed(`${token}.ics`)).text).events;
      expect(later.map((e) => e.summary)).toEqual(['Expires: Far ahead']);
    } finally {
      setClock(NOW);
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

  it.each([
    ['kept in memory', FEED_BUFFER.limit],
    ['too large to keep, so read again and streamed', 10_000],
  ])('answers every page of a large set (%s), and leaves out contracts whose dates are all before the window', async (_label, limit) => {
    const previous = FEED_BUFFER.limit;
    FEED_BUFFER.limit = limit;
    onTestFinished(() => {
      FEED_BUFFER.limit = previous;
    });
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

    const answer = await fetchFeed(`${token}.ics`);
    const { events } = parseCalendar(answer.text);
    expect(events).toHaveLength(1500 + 750);
    // The ETag names this very text, whichever way it was sent.
    expect(answer.headers.get('etag')).toBe(weakEtag(answer.text));
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
      // globex-1: its expiration, renewal and notice deadline.
      [demoContractId('globex-1'), demoContractId('globex-1'), demoContractId('globex-1'), demoContractId('globex-2'), demoContractId('globex-2')].sort(),
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

describe('what calendar apps poll with', () => {
  it('gives every event the same UID whatever host the feed is read through, and links to the contract on that host', async () => {
    const read = async (host: string) =>
      parseCalendar((await fetchFeed(`${tokens.alice}.ics`, { headers: { 'X-Forwarded-Host': host } })).text).events.sort(byUid);
    const one = await read('contracts.example.com');
    const other = await read('renewals.example.org:8443');
    expect(one.length).toBeGreaterThan(0);
    expect(other.map((e) => e.uid)).toEqual(one.map((e) => e.uid));
    for (const event of one) expect(event.uid).toMatch(/^[0-9a-f-]{36}-(expiration|renewal|notice)@contract-data-api$/);
    for (const event of other) expect(event.url).toBe(`https://renewals.example.org:8443/contracts/${event.uid.slice(0, 36)}`);
  });

  it('sends ETag and Last-Modified, and answers If-None-Match and If-Modified-Since with 304 and no body', async () => {
    const first = await fetchFeed(`${tokens.bob}.ics`);
    const etag = first.headers.get('etag')!;
    const lastModified = first.headers.get('last-modified')!;
    expect(etag).toBe(weakEtag(first.text));
    expect(new Date(lastModified).getTime()).toBeLessThanOrEqual(Date.now());
    expect(lastModified).toMatch(/GMT$/);

    const revalidations: Record<string, string>[] = [{ 'If-None-Match': etag }, { 'If-Modified-Since': lastModified }, { 'If-Modified-Since': new Date(Date.now() + 3_600_000).toUTCString() }];
    for (const headers of revalidations) {
      const again = await fetchFeed(`${tokens.bob}.ics`, { headers });
      expect(again.status, JSON.stringify(headers)).toBe(304);
      expect(again.text).toBe('');
      expect(again.headers.get('etag')).toBe(etag);
      expect(again.headers.get('last-modified')).toBe(lastModified);
      expect(again.headers.get('cache-control')).toBe('private, max-age=300');
    }
    const head = await fetchFeed(`${tokens.bob}.ics`, { method: 'HEAD', headers: { 'If-None-Match': etag } });
    expect(head.status).toBe(304);
    // If-None-Match decides when both are sent (RFC 9110 13.2.2); an older date or an unreadable one is a full answer.
    const fullAnswers: Record<string, string>[] = [
      { 'If-None-Match': '"something else"', 'If-Modified-Since': lastModified },
      { 'If-Modified-Since': new Date(new Date(lastModified).getTime() - 1000).toUTCString() },
      { 'If-Modified-Since': 'not a date' },
    ];
    for (const headers of fullAnswers) {
      const full = await fetchFeed(`${tokens.bob}.ics`, { headers });
      expect(full.status, JSON.stringify(headers)).toBe(200);
      expect(full.text).toBe(first.text);
    }
  });

  it('moves Last-Modified forward on every change, deletions and lost memberships included, even within one second', async () => {
    const owner = await insertUser('poller');
    await handle.db.insert(memberships).values({ userId: owner, organizationId: DEMO_ORGS.globex.id });
    const [own] = await handle.db
      .insert(contracts)
      .values(contract(owner, { title: 'Poller lease', status: 'completed', expirationDate: '2027-06-30', renewalDate: null, createdAt: new Date('2026-01-01T00:00:00Z') }))
      .returning({ id: contracts.id });
    const { token } = await newFeed(owner);
    const poll = (headers: Record<string, string> = {}) => fetchFeed(`${token}.ics`, { headers });

    const first = await poll();
    const lastModified = first.headers.get('last-modified')!;
    expect(new Date(lastModified).getTime()).toBe(Math.floor(NOW.getTime() / 1000) * 1000);
    // An hour later, nothing changed: the same validators, and the client's copy is current.
    setClock(new Date(NOW.getTime() + 3_600_000));
    const unchanged = await poll({ 'If-Modified-Since': lastModified });
    expect(unchanged.status).toBe(304);
    expect(unchanged.headers.get('last-modified')).toBe(lastModified);

    // A deleted contract leaves no newer updated_at behind; the feed still changed.
    await handle.db.delete(contracts).where(eq(contracts.id, own!.id));
    const afterDelete = await poll({ 'If-Modified-Since': lastModified });
    expect(afterDelete.status).toBe(200);
    expect(afterDelete.text).not.toContain('Poller lease');
    const deleted = afterDelete.headers.get('last-modified')!;
    expect(new Date(deleted).getTime()).toBeGreaterThan(new Date(lastModified).getTime());

    // Two changes within one second still get two Last-Modified values.
    await handle.db.delete(memberships).where(and(eq(memberships.userId, owner), eq(memberships.organizationId, DEMO_ORGS.globex.id)));
    const afterMembership = await poll({ 'If-Modified-Since': deleted });
    expect(afterMembership.status).toBe(200);
    expect(parseCalendar(afterMembership.text).events).toEqual([]);
    expect(new Date(afterMembership.headers.get('last-modified')!).getTime()).toBe(new Date(deleted).getTime() + 1000);
    expect(afterMembership.headers.get('etag')).not.toBe(afterDelete.headers.get('etag'));
    setClock(NOW);
  });
});

describe('bad feed addresses', () => {
  it('answers one and the same 404 envelope for every kind of bad token, and for a file that is not .ics', async () => {
    const revoked = await newFeed(DEMO_USERS.carol.id, 'to revoke');
    await revokeFeedToken(handle.db, DEMO_USERS.carol.id, revoked.id);
    const apiKey = (await newApiKey(handle.db, DEMO_USERS.alice.id, { name: 'not a feed token' })).key;
    const valid = tokens.carol!;
    const files = {
      unknown: `${TOKEN_FORMATS.calendar_feed.generate()}.ics`,
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
    const { token, id } = await newFeed(DEMO_USERS.alice.id, 'short-lived');
    expect((await fetchFeed(`${token}.ics`)).status).toBe(200);
    await revokeFeedToken(handle.db, DEMO_USERS.alice.id, id);
    const res = await fetchFeed(`${token}.ics`);
    expect(res.status).toBe(404);
    expect(res.json).toMatchObject({ error: { code: 'not_found' } });
  });

  it('limits failed lookups per client address: 404 until the limit, then 429, even for a valid token', async () => {
    const address = freshAddress();
    const statuses: number[] = [];
    for (let i = 0; i < 31; i++) statuses.push((await fetchFeed(`${TOKEN_FORMATS.calendar_feed.generate()}.ics`, { address })).status);
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
    const { token, id } = await newFeed(DEMO_USERS.bob.id, 'usage');
    const lastUsed = async () => (await handle.db.select({ at: accessTokens.lastUsedAt }).from(accessTokens).where(eq(accessTokens.id, id)))[0]!.at;
    expect(await lastUsed()).toBeNull();
    try {
      await fetchFeed(`${token}.ics`);
      await vi.waitFor(async () => expect(await lastUsed()).toEqual(NOW));
      setClock(new Date(NOW.getTime() + 59_000));
      await fetchFeed(`${token}.ics`);
      await new Promise((r) => setTimeout(r, 100));
      expect(await lastUsed()).toEqual(NOW);
      setClock(new Date(NOW.getTime() + 60_000));
      await fetchFeed(`${token}.ics`);
      await vi.waitFor(async () => expect(await lastUsed()).toEqual(new Date(NOW.getTime() + 60_000)));
    } finally {
      setClock(NOW);
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
