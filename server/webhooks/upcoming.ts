import { runStatement, type Database } from '@/db/client';
import { insertUpcomingDelivery, selectUpcomingSubscribers, upcomingStatement, type UpcomingKind } from '@/db/queries/webhooks';
import { loadEndpointScope } from '@/server/access/scope';
import { addDays, utcToday } from '@/server/dates';

/**
 * contract.renewal_upcoming (the next renewal: an evergreen contract's renewal rolled
 * forward), contract.expiration_upcoming and contract.notice_deadline_upcoming (the last
 * day notice stops the next renewal), at each endpoint's offsets (days before the date;
 * default 90, 30, 7). An evergreen contract's next term is a new date: its offsets fire
 * again as it approaches. A date is "within an offset" from the day it
 * is at most that many days away (UTC days, as the API's `renewing_within_days`), the date
 * itself included. Each run, for each active endpoint subscribed to one of them, for each
 * completed contract its owner sees now whose date is within its largest offset, the event
 * of the *smallest* offset that contains the date is sent, once per endpoint, contract,
 * date and offset:
 *
 * - 60 days before, with offsets 90, 30, 7: the 90-day event (days_until 60), then the
 *   30-day one thirty days later, then the 7-day one; an endpoint created late or a
 *   worker that was down catches up with one event, not three;
 * - a date moved (to another day) is a new date: its offsets fire again as it approaches,
 *   and moving it back does not repeat the ones already sent for it.
 *
 * The marker table decides "once", in the same statement that writes the event, so that
 * several workers running this at the same moment send each event once.
 */

const KINDS = ['renewal', 'expiration', 'notice_deadline'] as const satisfies readonly UpcomingKind[];

const daysBetween = (from: string, to: string) => Math.round((Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / 86_400_000);

/** Queues the upcoming-date events due at `now`. Returns how many were queued. */
export async function queueUpcomingEvents(db: Database, now: Date): Promise<number> {
  const today = utcToday(now);
  let queued = 0;
  for (const endpoint of await selectUpcomingSubscribers(db)) {
    const offsets = [...new Set(endpoint.renewalOffsets)].sort((a, b) => a - b);
    if (offsets.length === 0) continue;
    const scope = await loadEndpointScope(db, endpoint.id);
    if (!scope) continue;
    for (const kind of KINDS) {
      if (!endpoint.eventTypes.includes(`contract.${kind}_upcoming`)) continue;
      const rows = await runStatement(db, upcomingStatement(scope, kind, today, addDays(today, offsets.at(-1)!)));
      for (const row of rows) {
        const daysUntil = daysBetween(today, row.date);
        const offsetDays = offsets.find((offset) => offset >= daysUntil);
        if (offsetDays === undefined) continue;
        const id = await insertUpcomingDelivery(db, { endpointId: endpoint.id, contractId: row.id, kind, date: row.date, offsetDays, daysUntil, now });
        if (id) queued++;
      }
    }
  }
  return queued;
}
