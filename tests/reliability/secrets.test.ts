import { createHash } from 'node:crypto';
import { createServer, type AddressInfo } from 'node:net';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { openPglite, openPostgres } from '@/db/client';
import { setProcessDatabase } from '@/server/database';
import { users } from '@/db/schema';
import { DEMO_ORGS } from '@/db/seed/demo';
import { clearVerifiedTokenCache } from '@/server/access/tokens';
import { type Answer, apiRequest, PROXY_CLIENT_ADDRESS, send } from '../helpers/api';
import { newApiKey } from '../helpers/tokens';
import { createDemoWorld, type DemoWorld } from './support/world';
import { configureForFile } from '../helpers/config';
import { captureLogs, type CapturedLogs } from '../helpers/logs';

/**
 * API keys never appear in logs, error bodies, headers or URLs, and every kind of bad
 * key gets the very same 401, whatever the operation: a caller learns nothing about
 * which keys exist. (Other tenants' ids answering like missing ids is a property in
 * tenant-isolation.test.ts.)
 */

configureForFile({ ...PROXY_CLIENT_ADDRESS, RATE_LIMIT_GENERAL_PER_WINDOW: '1000000', RATE_LIMIT_EXPORT_PER_WINDOW: '1000000', RATE_LIMIT_AUTH_FAILURES_PER_MINUTE: '1000000' });

let world: DemoWorld;
let deletedUserKey: string;
const output: string[] = [];
let logs: CapturedLogs | undefined;

beforeAll(async () => {
  world = await createDemoWorld();
  const [ghost] = await world.handle.db.insert(users).values({ email: 'ghost@example.com' }).returning();
  deletedUserKey = (await newApiKey(world.handle.db, ghost!.id, { name: 'ghost' })).key;
  await world.handle.db.delete(users).where(eq(users.id, ghost!.id)); // its keys go with it
  // Everything the process prints, by any route.
  const record = (...args: unknown[]) => void output.push(args.map((a) => (a instanceof Error ? `${a.stack}\n${String((a as { cause?: unknown }).cause)}` : typeof a === 'string' ? a : JSON.stringify(a) ?? String(a))).join(' '));
  for (const method of ['log', 'info', 'warn', 'error', 'debug', 'trace'] as const) vi.spyOn(console, method).mockImplementation(record);
  // And the logger's lines, which go to fd 1 without passing process.stdout.write.
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
  vi.restoreAllMocks();
  logs?.restore();
  await world?.handle.close();
});

/** Status, headers and body, without what differs between any two requests. */
function comparable(a: Answer) {
  const headers = Object.fromEntries([...a.headers].filter(([name]) => name !== 'x-request-id'));
  return JSON.stringify({ status: a.status, headers, body: { ...(a.json as object), request_id: undefined } });
}

const operations: [string, (key: string | null, headers?: Record<string, string>, query?: string) => Request][] = [
  ['list', (key, headers, query = '') => apiRequest('GET', `/contracts?limit=5${query}`, { key, headers })],
  ['get', (key, headers, query = '') => apiRequest('GET', `/contracts/${world.contracts[0]!.id}${query ? `?${query.slice(1)}` : ''}`, { key, headers })],
  ['export', (key, headers, query = '') => apiRequest('POST', `/contracts/export${query ? `?${query.slice(1)}` : ''}`, { key, headers, body: `{"organization_id":"${DEMO_ORGS.acme.id}"}` })],
];

describe('API keys stay secret', () => {
  const sent: string[] = [];
  const answers: Answer[] = [];
  const call = async (req: Request) => {
    const answer = await send(req);
    answers.push(answer);
    return answer;
  };

  it('every kind of bad key gets the same 401, on every operation', async () => {
    const valid = world.keys.alice;
    const badKeys: [string, string | null, Record<string, string>?, string?][] = [
      ['missing', null],
      ['empty', ''],
      ['blank', '   '],
      ['garbage', world.badKeys.garbage],
      ['bad checksum', world.badKeys.badChecksum],
      ['truncated', world.badKeys.truncated],
      ['unknown but well-formed', world.badKeys.unknown],
      ['revoked', world.badKeys.revoked],
      ['expired', world.badKeys.expired],
      ['of a deleted user', deletedUserKey],
      ['in lower case', valid.toLowerCase()],
      ['twice, comma-separated', `${valid}, ${valid}`],
      ['as a Bearer token with another key\'s checksum', null, { Authorization: `Bearer ${valid.slice(0, -1)}${valid.endsWith('A') ? 'B' : 'A'}` }],
      ['as Basic credentials instead', null, { Authorization: `Basic ${Buffer.from(`user:${valid}`).toString('base64')}` }],
      ['in the query string instead', null, {}, `&api_key=${valid}`],
    ];
    sent.push(valid, ...badKeys.flatMap(([, key]) => (key ? [key] : [])), deletedUserKey);
    const shapes = new Set<string>();
    for (const [operation, build] of operations) {
      const forOperation = new Set<string>();
      for (const [kind, key, headers, query] of badKeys) {
        clearVerifiedTokenCache(); // the database path, not only the cache
        const answer = await call(build(key, headers, query));
        expect(answer.status, `${operation}, key ${kind}`).toBe(401);
        expect(answer.headers.get('x-ratelimit-limit'), `${operation}, key ${kind}`).toBeNull();
        forOperation.add(comparable(answer));
        shapes.add(JSON.stringify((answer.json as { error: unknown }).error));
      }
      expect(forOperation.size, `${operation}: answers differ between kinds of bad key`).toBe(1);
    }
    // And the error itself is the same for the three operations.
    expect(shapes.size).toBe(1);
  });

  it('real keys work, on every operation', async () => {
    for (const user of ['alice', 'bob', 'carol'] as const) {
      for (const [operation, build] of operations) {
        const answer = await call(build(world.keys[user]));
        expect([200, 403, 404], `${operation} as ${user}`).toContain(answer.status);
      }
    }
  });

  it.each([
    ['fails inside (500)', 500, async () => {
      // A closed embedded database: every statement throws, and Drizzle's error carries the SQL and its parameters.
      const dead = await openPglite();
      await dead.close();
      return dead;
    }],
    ['is unreachable (503)', 503, async () => openPostgres(`postgres://nobody@127.0.0.1:${await closedPort()}/nowhere`, { max: 1 })],
  ] as const)('a database that %s: the failure is logged without any key or hash, the answer shows nothing of it', async (_name, status, open) => {
    const broken = await open();
    const logged = output.length;
    // Bob's key is verified (and cached) first, so his requests fail further on; Alice's
    // key lookup itself meets the failure.
    clearVerifiedTokenCache();
    expect((await call(operations[0]![1](world.keys.bob))).status).toBe(200);
    setProcessDatabase(broken);
    try {
      for (const user of ['alice', 'bob'] as const) {
        for (const [operation, build] of user === 'alice' ? operations.slice(0, 1) : operations) {
          if (user === 'alice') clearVerifiedTokenCache();
          const answer = await call(build(world.keys[user]));
          expect(answer.status, `${operation}: ${answer.text}`).toBe(status);
          expect(answer.text).not.toMatch(/select|from|access_tokens|token_hash|closed|ECONN|pglite|postgres/i);
        }
      }
    } finally {
      setProcessDatabase(world.handle);
      await broken.close().catch(() => {});
    }
    expect(output.slice(logged).join('\n')).toMatch(status === 500 ? /unexpected error/ : /database unavailable/);
  });

  it('no key, and no hash of a key, in any log line, response body, header or redirect', () => {
    const everything = output.join('\n');
    const responses = answers.map((a) => `${a.text}\n${[...a.headers].map(([n, v]) => `${n}: ${v}`).join('\n')}`).join('\n');
    for (const key of new Set(sent)) {
      if (!key.startsWith('cdapi_') || key.length < 30) continue; // 'not-a-key' and friends are no secret
      const hash = createHash('sha256').update(key).digest('hex');
      for (const secret of [key, key.slice(6, 30), hash]) {
        expect(everything.includes(secret), `a key (or its hash) was logged: ${secret.slice(0, 10)}…`).toBe(false);
        expect(responses.includes(secret), `a key (or its hash) was answered: ${secret.slice(0, 10)}…`).toBe(false);
      }
    }
    expect(answers.some((a) => a.headers.has('location'))).toBe(false);
  });
});

/** A loopback port nothing listens on (connections are refused). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}
