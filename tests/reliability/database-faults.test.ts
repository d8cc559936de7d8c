import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { openPostgres, type DatabaseHandle } from '@/db/client';
import { setProcessDatabase } from '@/server/database';
import { DEMO_USERS, demoContractRows, seedDemo } from '@/db/seed/demo';
import { clearVerifiedTokenCache } from '@/server/access/tokens';
import { errorEnvelopeSchema } from '@/server/errors';
import { type Answer, apiRequest, type ErrorJson, PROXY_CLIENT_ADDRESS, send } from '../helpers/api';
import { PREPARE } from '../helpers/db';
import { newApiKey } from '../helpers/tokens';
import { createPrivatePostgres, NEEDS_POSTGRES, viaPort, type PrivatePostgres } from './support/postgres';
import { startTcpProxy, type TcpProxy } from './support/tcp-proxy';
import { configureForFile } from '../helpers/config';
import { captureLogs, type CapturedLogs } from '../helpers/logs';

/**
 * The database goes away, hangs or is too slow: every request answers 503
 * service_unavailable JSON with Retry-After within a few seconds, never hangs, and the
 * first request after the database is back succeeds, in the same process.
 *
 * The app's pool (openPostgres, as in production, with a 500 ms statement timeout) talks
 * to a private database through a TCP proxy the test cuts and restores.
 */

// Past connect_timeout, so that a host that never answers is still reported by the pool
// (CONNECT_TIMEOUT); a connection gone silent is answered by the deadline.
const REQUEST_DEADLINE_MS = 5_500;
configureForFile({ ...PROXY_CLIENT_ADDRESS, RATE_LIMIT_GENERAL_PER_WINDOW: '100000', RATE_LIMIT_EXPORT_PER_WINDOW: '100000', REQUEST_DEADLINE_MS: String(REQUEST_DEADLINE_MS) });

const STATEMENT_TIMEOUT_MS = 500;
/** postgres.js connect_timeout in db/client.ts. */
const CONNECT_TIMEOUT_MS = 5_000;
/** "At once": a refused connection or a cancelled statement, plus scheduling on a busy CI machine. */
const PROMPT_MS = 2_000;
/** "Within a few seconds" while many requests queue for a pool that cannot connect. */
const FEW_SECONDS_MS = 3_000;

describe.skipIf(!process.env.DATABASE_URL)(`database faults (${NEEDS_POSTGRES})`, () => {
  let db: PrivatePostgres;
  let proxy: TcpProxy;
  let app: DatabaseHandle;
  let key: string;
  let logs: CapturedLogs;
  const contractId = demoContractRows().find((c) => c.ownerId === DEMO_USERS.bob.id && !c.organizationId)!.id!;

  beforeAll(async () => {
    db = await createPrivatePostgres('faults');
    // Also on the database, as docs/deploy-vercel.md ("Behind a pooler") advises behind a transaction pooler (PgBouncer
    // 1.18 drops the startup parameter that carries DATABASE_STATEMENT_TIMEOUT_MS).
    await db.admin.query(`ALTER DATABASE ${db.name} SET statement_timeout = ${STATEMENT_TIMEOUT_MS}`);
    await seedDemo(db.handle.db);
    key = (await newApiKey(db.handle.db, DEMO_USERS.bob.id, { name: 'faults' })).key;
    const target = new URL(db.url);
    proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
    app = await openPostgres(viaPort(db.url, proxy.port), { max: 4, prepare: PREPARE, statementTimeoutMs: STATEMENT_TIMEOUT_MS });
    setProcessDatabase(app);
    logs = captureLogs();
  });
  afterAll(async () => {
    // Requests left behind by a deadline end when the pool closes, and log as they go.
    await app?.close().catch(() => {});
    await new Promise((resolve) => setTimeout(resolve, 200));
    vi.restoreAllMocks();
    logs.restore();
    await proxy?.close();
    await db?.drop();
    // Each failure was logged as one line naming the cause, never as a request's details.
    const logged = logs.entries.filter((entry) => entry.level === 'error');
    expect(logged.length).toBeGreaterThan(0);
    for (const entry of logged) {
      expect(entry.request_id).toMatch(/^req_[0-9a-f]{32}$/);
      const { level: _level, time: _time, pid: _pid, hostname: _hostname, request_id: _id, ...rest } = entry;
      expect([
        { msg: 'database unavailable', error_code: expect.stringMatching(/^[A-Z0-9_]+$/) as unknown },
        { msg: 'request deadline passed: answered 503', deadline_ms: expect.any(Number) as unknown },
      ]).toContainEqual(rest);
    }
  });

  // The three operations; the key cache is emptied first, so the key lookup meets the fault too.
  const operations: [string, () => Promise<Answer>][] = [
    ['list', () => send(apiRequest('GET', '/contracts?limit=5', { key }))],
    ['get', () => send(apiRequest('GET', `/contracts/${contractId}`, { key }))],
    ['export', () => send(apiRequest('POST', '/contracts/export', { key, body: '{"status":"completed"}' }))],
  ];
  async function everyOperation(): Promise<Answer[]> {
    clearVerifiedTokenCache();
    return Promise.all(operations.map(([, run]) => run()));
  }

  function expectServiceUnavailable(answers: Answer[], withinMs: number) {
    for (const [i, answer] of answers.entries()) {
      const name = operations[i]![0];
      expect(answer.status, `${name}: ${answer.text}`).toBe(503);
      expect(answer.headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect(errorEnvelopeSchema.safeParse(answer.json).success).toBe(true);
      expect((answer.json as ErrorJson).error.code).toBe('service_unavailable');
      const retryAfter = Number(answer.headers.get('retry-after'));
      expect(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 10, `Retry-After ${retryAfter}`).toBe(true);
      expect(answer.ms, `${name} answered after ${Math.round(answer.ms)} ms`).toBeLessThan(withinMs);
      // Nothing of the driver's error reaches the client. The request id is left out: it is
      // random hex, and once held "57014" (CI, 2026-11-28).
      const withoutRequestId = answer.text.replace(/"request_id":"req_[0-9a-f]+"/, '"request_id":"…"');
      expect(withoutRequestId).not.toMatch(/ECONN|CONNECT_TIMEOUT|CONNECTION_|57014|statement timeout|postgres|127\.0\.0\.1/i);
    }
  }

  function expectServed(answers: Answer[]) {
    for (const [i, answer] of answers.entries()) {
      expect(answer.status, `${operations[i]![0]}: ${answer.text}`).toBe(200);
      expect(answer.ms).toBeLessThan(PROMPT_MS);
    }
  }

  it('database refusing connections: 503 at once, then served again as soon as it is back', async () => {
    expectServed(await everyOperation());
    await proxy.cut();
    try {
      expectServiceUnavailable(await everyOperation(), PROMPT_MS);
    } finally {
      // Also when the check fails: the next tests need the database back.
      await proxy.restore();
    }
    expectServed(await everyOperation());
  });

  // Behind a transaction pooler (DATABASE_PREPARE=false marks one in this suite) the
  // app's statement_timeout is a startup parameter the pooler drops, and the database's
  // default does not reach server connections the pooler opened before: the deployment sets
  // it on the role (docs/deploy-vercel.md, "Behind a pooler"). Skipped there.
  it.skipIf(!PREPARE)('a statement slower than statement_timeout: 503 after about the timeout, served once it is fast again', async () => {
    // Another session holds an exclusive lock on contracts: every contracts query waits.
    const locker = await openPostgres(db.url, { max: 1 });
    try {
      await locker.query('BEGIN');
      await locker.query('LOCK TABLE contracts IN ACCESS EXCLUSIVE MODE');
      const answers = await everyOperation();
      expectServiceUnavailable(answers, STATEMENT_TIMEOUT_MS + PROMPT_MS);
      for (const answer of answers) expect(answer.ms).toBeGreaterThanOrEqual(STATEMENT_TIMEOUT_MS - 50);
      await locker.query('COMMIT');
      expectServed(await everyOperation());
    } finally {
      await locker.close();
    }
  });

  it('a host that accepts TCP but never answers: 503 after connect_timeout, not a hang', async () => {
    await proxy.blackhole();
    expectServiceUnavailable(await everyOperation(), CONNECT_TIMEOUT_MS + PROMPT_MS);
    await proxy.restore();
    expectServed(await everyOperation());
  }, 20_000);

  /**
   * When the database stops answering on a connection that is already open (a frozen
   * host, a network partition), statement_timeout cannot help (it runs in the server) and
   * postgres.js has no client-side deadline: without the request deadline of
   * server/http/deadline.ts the request would wait until TCP gives up, minutes later.
   */
  it('a database that goes silent on an open connection: 503 at the request deadline, not a hang', async () => {
    expectServed(await everyOperation()); // connections open
    proxy.freeze();
    const deadlineLines = () => logs.entries.filter((entry) => entry.msg === 'request deadline passed: answered 503' && entry.deadline_ms === REQUEST_DEADLINE_MS).length;
    const before = deadlineLines();
    try {
      const answers = await withDeadline(everyOperation(), REQUEST_DEADLINE_MS + PROMPT_MS);
      expectServiceUnavailable(answers, REQUEST_DEADLINE_MS + PROMPT_MS);
      // Answered by the deadline, not by some earlier failure.
      for (const answer of answers) expect(answer.ms).toBeGreaterThanOrEqual(REQUEST_DEADLINE_MS - 50);
      expect(deadlineLines() - before).toBe(answers.length);
    } finally {
      // Frozen connections lost the queries sent meanwhile and never answer; the next
      // test's cut (or the pool's close) ends them.
      await proxy.restore();
    }
  }, 20_000);

  /**
   * postgres.js waits before reconnecting, with a backoff that by default grows with every
   * failed attempt of the pool (3^n / 100 s, up to 20 s): a dozen failures into an outage,
   * a request waited 10 to 20 s before it even tried, and so could the first request after
   * the database was back. db/client.ts bounds it at half a second: queued requests wait
   * one backoff each, 12 concurrent requests on 4 connections about 3 at most.
   */
  it('a sustained outage: every request still answers within a few seconds, and recovery is immediate', async () => {
    await proxy.cut();
    try {
      for (let round = 0; round < 4; round++) {
        const answers = await Promise.all(
          Array.from({ length: 4 }, () => withDeadline(everyOperation(), FEW_SECONDS_MS + 1_000)),
        );
        for (const batch of answers) expectServiceUnavailable(batch, FEW_SECONDS_MS);
      }
    } finally {
      await proxy.restore();
    }
    expectServed(await withDeadline(everyOperation(), CONNECT_TIMEOUT_MS));
  }, 30_000);
});

/** The promise's value, or a rejection once `ms` have passed (the request keeps running). */
function withDeadline<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise,
    new Promise<T>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}
