import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database, DatabaseHandle } from '@/db/client';
import { countQueuedMail } from '@/db/queries/mail';
import { completeSignUp, requestPasswordReset, startSignUp } from '@/server/auth/accounts';
import { configureForFile } from '../helpers/config';
import { createTestDatabase, describeDriver } from '../helpers/db';

/**
 * Sign-up and "Forgot password?" must not tell, by their time, whether an address has an
 * account (issue 24; the sign-in's equal cost is row 3d of docs/security.md). The request
 * does the same work either way (the limit, then the rest after the response), so the
 * times of taken and free addresses, interleaved, have the same medians, and neither
 * request waits for a password hash or the lookup of the address.
 */

configureForFile({ RATE_LIMIT_SIGN_IN_ADDRESS_PER_WINDOW: '100000', RATE_LIMIT_PASSWORD_RESET_PER_HOUR: '100000', RATE_LIMIT_ACCOUNT_MAIL_PER_HOUR: '100000', RATE_LIMIT_STORE: 'memory' });

let handle: DatabaseHandle;
let db: Database;
const run = randomUUID().slice(0, 8);
const TAKEN = `taken-${run}@example.test`;
const PAIRS = 25;
const WARM_UP = 3; // pairs left out of the medians (first calls compile and fill caches)

beforeAll(async () => {
  handle = await createTestDatabase();
  db = handle.db;
  await completeSignUp(db, { email: TAKEN, password: 'the owner password' });
});
afterAll(() => handle?.close());

const median = (xs: number[]) => {
  const kept = [...xs.slice(WARM_UP)].sort((a, b) => a - b);
  return kept[Math.floor(kept.length / 2)]!;
};

/**
 * Both requests take well under a millisecond here, where a ratio is noise on a loaded
 * machine: the medians must be within 2 ms of each other (a database lookup or insert on
 * one path only costs more than that on PGlite, a hash ~80 ms) and each under 10 ms.
 */
function expectEqualTime(label: string, a: number[], b: number[]): void {
  console.log(`${label}: medians ${median(a).toFixed(2)} ms and ${median(b).toFixed(2)} ms over ${a.length - WARM_UP} interleaved pairs`);
  expect(Math.abs(median(a) - median(b))).toBeLessThan(2);
  expect(Math.max(median(a), median(b))).toBeLessThan(10);
}
async function timed(work: () => Promise<unknown>): Promise<number> {
  const started = process.hrtime.bigint();
  await work();
  return Number(process.hrtime.bigint() - started) / 1e6;
}
async function settle(check: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 200 && !(await check()); i++) await new Promise((r) => setTimeout(r, 20));
}

describe(`equal time whether or not the address has an account (${describeDriver()})`, () => {
  it('sign-up', { timeout: 120_000 }, async () => {
    const taken: number[] = [];
    const free: number[] = [];
    for (let i = 0; i < PAIRS; i++) {
      for (const [email, into] of (i % 2 ? [[TAKEN, taken], [`free-${i}-${run}@example.test`, free]] : [[`free-${i}-${run}@example.test`, free], [TAKEN, taken]]) as [string, number[]][]) {
        const queued = await countQueuedMail(db);
        into.push(await timed(() => startSignUp(db, { email, password: 'some long password' }, `203.0.113.9-${run}`)));
        // The rest (hash, insert, message) after the answer: wait for it before the next sample.
        await settle(async () => (await countQueuedMail(db)) > queued);
        // And what follows its commit (PGlite runs in this thread): the next sample starts idle.
        await new Promise((r) => setTimeout(r, 50));
      }
    }
    expectEqualTime('sign-up (taken, free)', taken, free);
    expect(await countQueuedMail(db)).toBe(2 * PAIRS + 1);
  });

  it('"Forgot password?"', { timeout: 120_000 }, async () => {
    const known: number[] = [];
    const unknown: number[] = [];
    for (let i = 0; i < PAIRS; i++) {
      for (const [email, into] of (i % 2 ? [[TAKEN, known], [`nobody-${i}-${run}@example.test`, unknown]] : [[`nobody-${i}-${run}@example.test`, unknown], [TAKEN, known]]) as [string, number[]][]) {
        into.push(await timed(() => requestPasswordReset(db, { email, address: `203.0.113.10-${run}` })));
        await new Promise((r) => setTimeout(r, 60));
      }
    }
    expectEqualTime('forgot password (account, none)', known, unknown);
  });
});
