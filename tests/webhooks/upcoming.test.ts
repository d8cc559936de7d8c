import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '@/db/client';
import { contracts, users } from '@/db/schema';
import { addDays } from '@/server/dates';
import { rollRenewals } from '@/server/contracts/rolling';
import { queueUpcomingEvents } from '@/server/webhooks/upcoming';
import { configureForFile } from '../helpers/config';
import { createTestDatabase } from '../helpers/db';
import { clearWebhooks, receiverEndpoint, startReceiver, testClock, testWorker, verify, WEBHOOK_TEST_ENV, type Receiver } from './support';

/**
 * contract.renewal_upcoming and contract.expiration_upcoming on a fixed clock: once per
 * endpoint, contract, date and offset; the smallest offset that contains the date; a moved
 * date starts over; pending contracts and other users' contracts never fire.
 */

configureForFile(WEBHOOK_TEST_ENV);

let handle: DatabaseHandle;
let receiver: Receiver;
let userId: string;
let contractId: string;
const RENEWAL = '2027-06-30';
const at = (date: string) => new Date(`${date}T08:00:00Z`);

beforeAll(async () => {
  handle = await createTestDatabase();
  const [user] = await handle.db.insert(users).values({ email: 'upcoming@example.com' }).returning();
  userId = user!.id;
  const [other] = await handle.db.insert(users).values({ email: 'someone-else@example.com' }).returning();
  // Another user's contract with the same dates: never sent to our endpoint.
  await handle.db.insert(contracts).values({ ownerId: other!.id, title: 'Not yours', fileName: 'n.pdf', fileSize: 1, status: 'completed', renewalDate: RENEWAL });
});
afterAll(() => handle?.close());
beforeEach(async () => {
  receiver = await startReceiver();
  await handle.query(`DELETE FROM contracts WHERE owner_id = $1`, [userId]);
  const [contract] = await handle.db
    .insert(contracts)
    .values({ ownerId: userId, title: 'Lease', fileName: 'l.pdf', fileSize: 1, status: 'completed', renewalDate: RENEWAL, expirationDate: '2027-09-30' })
    .returning();
  contractId = contract!.id;
});
afterEach(async () => {
  await receiver.close();
  await clearWebhooks(handle.db);
});

const RENEWALS = { eventTypes: ['contract.renewal_upcoming' as const] };

/** Runs the scheduler and the worker on `date`; returns the events the receiver got then. */
async function runOn(date: string, clock = testClock()) {
  clock.set(at(date));
  const before = receiver.received.length;
  await queueUpcomingEvents(handle.db, clock());
  await testWorker(handle.db, { clock }).runOnce();
  return receiver.received.slice(before).map((r) => JSON.parse(r.body) as { type: string; data: { date: string; offset_days: number; days_until: number; contract: { id: string } } });
}

describe('upcoming renewals', () => {
  it('fire once at 90, 30 and 7 days before, and not in between or twice', async () => {
    const { secret } = await receiverEndpoint(handle.db, userId, receiver, RENEWALS, at(addDays(RENEWAL, -200)));
    expect(await runOn(addDays(RENEWAL, -91))).toEqual([]);
    const ninety = await runOn(addDays(RENEWAL, -90));
    expect(ninety.map((e) => [e.type, e.data.offset_days, e.data.days_until, e.data.date])).toEqual([['contract.renewal_upcoming', 90, 90, RENEWAL]]);
    expect(ninety[0]!.data.contract).toMatchObject({ id: contractId, data: { renewal_date: RENEWAL } });
    expect(verify(secret, receiver.received[0]!).type).toBe('contract.renewal_upcoming');
    expect(await runOn(addDays(RENEWAL, -90))).toEqual([]);
    expect(await runOn(addDays(RENEWAL, -45))).toEqual([]);
    expect((await runOn(addDays(RENEWAL, -30))).map((e) => e.data.offset_days)).toEqual([30]);
    expect(await runOn(addDays(RENEWAL, -29))).toEqual([]);
    expect((await runOn(addDays(RENEWAL, -6))).map((e) => [e.data.offset_days, e.data.days_until])).toEqual([[7, 6]]);
    expect(await runOn(RENEWAL)).toEqual([]);
    expect(await runOn(addDays(RENEWAL, 1))).toEqual([]);
  });

  it('an endpoint created late, or a date moved near, gets the smallest offset only', async () => {
    await receiverEndpoint(handle.db, userId, receiver, RENEWALS);
    expect((await runOn(addDays(RENEWAL, -60))).map((e) => [e.data.offset_days, e.data.days_until])).toEqual([[90, 60]]);
    await handle.query(`UPDATE contracts SET renewal_date = $1 WHERE id = $2`, [addDays(RENEWAL, -55), contractId]);
    // The new date is 5 days away: 7 only (not 90 and 30 as well).
    expect((await runOn(addDays(RENEWAL, -60))).map((e) => [e.data.offset_days, e.data.days_until, e.data.date])).toEqual([[7, 5, addDays(RENEWAL, -55)]]);
  });

  it('a date moved away starts over; moved back, it does not repeat what was sent for it', async () => {
    await receiverEndpoint(handle.db, userId, receiver, RENEWALS);
    expect((await runOn(addDays(RENEWAL, -30))).map((e) => e.data.offset_days)).toEqual([30]);
    const later = addDays(RENEWAL, 365);
    await handle.query(`UPDATE contracts SET renewal_date = $1 WHERE id = $2`, [later, contractId]);
    expect(await runOn(addDays(RENEWAL, -20))).toEqual([]);
    await handle.query(`UPDATE contracts SET renewal_date = $1 WHERE id = $2`, [RENEWAL, contractId]);
    expect(await runOn(addDays(RENEWAL, -19))).toEqual([]);
    expect((await runOn(addDays(RENEWAL, -7))).map((e) => [e.data.date, e.data.offset_days])).toEqual([[RENEWAL, 7]]);
    await handle.query(`UPDATE contracts SET renewal_date = $1 WHERE id = $2`, [later, contractId]);
    expect(await runOn(addDays(later, -91))).toEqual([]);
    expect((await runOn(addDays(later, -90))).map((e) => [e.data.date, e.data.offset_days])).toEqual([[later, 90]]);
  });

  it("each endpoint has its own offsets; expirations have their own events; a contract that is not completed never fires", async () => {
    await receiverEndpoint(handle.db, userId, receiver, { eventTypes: ['contract.renewal_upcoming', 'contract.expiration_upcoming'], renewalOffsets: [14] });
    const other = await startReceiver();
    try {
      await receiverEndpoint(handle.db, userId, other, { eventTypes: ['contract.expiration_upcoming'], renewalOffsets: [100] });
      const today = addDays('2027-09-30', -14);
      const clock = testClock(at(today));
      const events = await runOn(today, clock);
      // Renewal (2027-06-30) is past by then; the expiration is 14 days away.
      expect(events.map((e) => [e.type, e.data.offset_days])).toEqual([['contract.expiration_upcoming', 14]]);
      expect(other.received.map((r) => (JSON.parse(r.body) as { data: { offset_days: number } }).data.offset_days)).toEqual([100]);

      await handle.query(`UPDATE contracts SET status = 'processing', expiration_date = $1 WHERE id = $2`, ['2027-09-29', contractId]);
      expect(await runOn(today, clock)).toEqual([]);
    } finally {
      await other.close();
    }
  });
});

describe('upcoming notice deadlines and evergreen renewals', () => {
  it('fires contract.notice_deadline_upcoming at the offsets before the deadline, with the deadline as its date', async () => {
    // Renews 2027-06-30 with 60 days' notice: act by 2027-05-01.
    await handle.query(`UPDATE contracts SET auto_renewal = true, renewal_term = 'P1Y', notice_period = 'P60D' WHERE id = $1`, [contractId]);
    await receiverEndpoint(handle.db, userId, receiver, { eventTypes: ['contract.notice_deadline_upcoming'], renewalOffsets: [30, 7] });
    const deadline = '2027-05-01';
    expect(await runOn(addDays(deadline, -31))).toEqual([]);
    const thirty = await runOn(addDays(deadline, -30));
    expect(thirty.map((e) => [e.type, e.data.date, e.data.offset_days, e.data.days_until])).toEqual([['contract.notice_deadline_upcoming', deadline, 30, 30]]);
    expect(thirty[0]!.data.contract).toMatchObject({ id: contractId, data: { notice_deadline: deadline, next_renewal_date: RENEWAL } });
    expect((await runOn(addDays(deadline, -7))).map((e) => e.data.offset_days)).toEqual([7]);
    expect(await runOn(deadline)).toEqual([]);
  });

  it('over a year day by day, a monthly evergreen contract gets one renewal and one notice event before each term, the job rolling it or not', async () => {
    // Renewed monthly since 2025-01-31 (month ends clamp: 28 February, 30 April...), 10 days' notice.
    await handle.query(`UPDATE contracts SET renewal_date = '2025-01-31', auto_renewal = true, renewal_term = 'P1M', notice_period = 'P10D' WHERE id = $1`, [contractId]);
    await receiverEndpoint(handle.db, userId, receiver, { eventTypes: ['contract.renewal_upcoming', 'contract.notice_deadline_upcoming'], renewalOffsets: [5] }, at('2026-12-01'));
    const start = '2027-01-01';
    for (let d = 0; d < 366; d++) {
      const day = addDays(start, d);
      // The scheduled job rolls the stored dates one day in ten; the events never depend on it.
      if (d % 10 === 0) await rollRenewals(handle.db, day);
      await queueUpcomingEvents(handle.db, at(day));
    }
    const events = await handle.query<{ type: string; date: string; offset_days: number; days_until: number }>(
      `SELECT type, extra->>'date' AS date, (extra->>'offset_days')::int AS offset_days, (extra->>'days_until')::int AS days_until FROM webhook_events WHERE contract_id = $1 AND type LIKE '%_upcoming' ORDER BY seq`,
      [contractId],
    );
    const renewals = Array.from({ length: 13 }, (_, k) => addMonthsClamped('2025-01-31', 24 + k)).filter((date) => date >= start && date <= addDays(start, 365 + 5));
    const want = (type: string, dates: string[]) => dates.filter((date) => addDays(date, -5) <= addDays(start, 365) && date >= start).map((date) => ({ type, date, offset_days: 5, days_until: Math.min(5, daysBetween(start, date)) }));
    const notices = renewals.map((date) => addDays(date, -10));
    expect(events.filter((e) => e.type === 'contract.renewal_upcoming')).toEqual(want('contract.renewal_upcoming', renewals));
    expect(events.filter((e) => e.type === 'contract.notice_deadline_upcoming')).toEqual(want('contract.notice_deadline_upcoming', notices));
  }, 120_000);
});

/** `date` + `months` calendar months from its own day, clamped to the month's end (the rule of lib/renewal-dates.ts, written out again). */
function addMonthsClamped(date: string, months: number): string {
  const [y, m, d] = date.split('-').map(Number) as [number, number, number];
  const total = y * 12 + (m - 1) + months;
  const year = Math.floor(total / 12);
  const month = (total % 12) + 1;
  const last = new Date(Date.UTC(year, month, 0)).getUTCDate();
  return `${year}-${String(month).padStart(2, '0')}-${String(Math.min(d, last)).padStart(2, '0')}`;
}

const daysBetween = (from: string, to: string) => Math.round((Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / 86_400_000);
