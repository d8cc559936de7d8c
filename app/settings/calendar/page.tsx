import type { Metadata } from 'next';
import { CalendarFeedsManager } from '@/components/tokens/calendar-feeds-manager';
import { toTokenRow } from '@/components/tokens/types';
import { FEED_WINDOW_DAYS } from '@/lib/calendar';
import { organizationsOf, tokensPage } from '@/server/access/pages';
import { requireUser } from '@/server/auth/session';

export const metadata: Metadata = { title: 'Calendar feeds' };

export default async function CalendarFeedsPage() {
  const user = await requireUser('/settings/calendar');
  const [feeds, organizations] = await Promise.all([tokensPage(user, 'calendar_feed'), organizationsOf(user)]);
  return (
    <section aria-labelledby="calendar-feeds-title">
      <h2 id="calendar-feeds-title" style={{ fontSize: '1.3rem' }}>
        Calendar feeds
      </h2>
      <p className="muted" style={{ maxWidth: 680 }}>
        A calendar feed puts the renewal and expiration dates of your contracts into Google Calendar, Outlook or Apple Calendar:
        one all-day event per date, for your personal contracts and those of every organisation you belong to (or only those you
        choose), from{' '}
        {FEED_WINDOW_DAYS === 365 ? 'a year' : `${FEED_WINDOW_DAYS} days`} ago onwards. Each event names the contract, its
        parties and value, and links back to it. Your calendar app fetches the feed again every few hours.
      </p>
      <div className="alert alert-info" role="note" style={{ maxWidth: 680 }}>
        Calendar apps cannot sign in, so the feed&rsquo;s address itself is the key: anyone who has it can read these dates. It
        is shown once, when you create the feed. Revoke a feed here when you stop using it or if its address got out.
      </div>
      <CalendarFeedsManager
        initialFeeds={feeds.map(toTokenRow)}
        organizations={organizations.map((o) => ({ id: o.id, name: o.name, role: o.role }))}
      />
    </section>
  );
}
