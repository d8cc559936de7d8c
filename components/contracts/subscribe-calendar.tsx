'use client';

import Link from 'next/link';
import { useEffect, useState } from 'react';
import { FEED_WINDOW_DAYS } from '@/lib/calendar';
import { MAX_ACTIVE_TOKENS } from '@/lib/tokens';
import { CreateCalendarFeedDialog, NewCalendarFeedDialog, type CreatedFeed } from '../tokens/calendar-feed-dialogs';
import { useFocusReturn } from '../tokens/managed-list';
import type { OrganizationChoice } from '../tokens/restriction-fields';
import { trpc } from '../trpc-client';

const SETTINGS_HREF = '/settings/calendar';

/**
 * "Subscribe in calendar" on the contracts page: creates a calendar feed and shows its
 * webcal:// link, the same dialogs as Settings → Calendar feeds.
 *
 * An existing feed cannot be picked: only a hash of each feed's token is stored, so its
 * address cannot be shown again (that is what keeps a leaked database from leaking the
 * feeds). The dialog names the user's active feeds, so that nobody creates a second one
 * for a calendar that already subscribes, offers a new one, and links to Settings to
 * manage (revoke) them. What the feed reads is chosen as in Settings (everything, by
 * default, or the personal contracts and organisations picked).
 */
export function SubscribeInCalendar({ organizations }: { organizations: readonly OrganizationChoice[] }) {
  const [creating, setCreating] = useState(false);
  const [created, setCreated] = useState<CreatedFeed | null>(null);
  const button = useFocusReturn(creating || created !== null);
  return (
    <>
      <button ref={button} type="button" className="btn" onClick={() => setCreating(true)}>
        Subscribe in calendar
      </button>
      {creating ? (
        <CreateCalendarFeedDialog
          title="Subscribe in your calendar"
          initialName="My calendar"
          intro={<SubscribeIntro />}
          organizations={organizations}
          onClose={() => setCreating(false)}
          onCreated={(feed) => {
            setCreating(false);
            setCreated(feed);
          }}
        />
      ) : null}
      {created ? <NewCalendarFeedDialog feed={created} onClose={() => setCreated(null)} /> : null}
    </>
  );
}

/** What a feed holds, and the feeds the user already has (read when the dialog opens). */
function SubscribeIntro() {
  const [active, setActive] = useState<string[] | null>(null);
  useEffect(() => {
    let current = true;
    trpc.calendarFeeds.list
      .query()
      .then((feeds) => current && setActive(feeds.filter((f) => f.status === 'active').map((f) => f.name)))
      // Without the list the dialog still creates a feed; Settings shows the feeds.
      .catch(() => current && setActive(null));
    return () => {
      current = false;
    };
  }, []);
  return (
    <>
      <p>
        A calendar feed puts the renewal and expiration dates of your contracts (all of them by default, personal and of your
        organisations, not only this list; or those you choose below) into Google Calendar, Outlook or Apple Calendar, from {FEED_WINDOW_DAYS === 365 ? 'a year' : `${FEED_WINDOW_DAYS} days`}{' '}
        ago onwards. Its address is shown once, right after you create it.
      </p>
      {active && active.length > 0 ? (
        <div className="alert alert-info" role="note" data-testid="existing-feeds">
          You already have {active.length === 1 ? 'an active feed' : `${active.length} active feeds`}:{' '}
          {active.map((name, i) => (
            <span key={i}>
              {i > 0 ? ', ' : null}
              <strong>{name}</strong>
            </span>
          ))}
          . Their addresses are not stored, so they cannot be shown again: a calendar subscribed to one already has these dates.
          Create a new feed for another calendar{active.length >= MAX_ACTIVE_TOKENS.calendar_feed ? ' (revoke one first: you have the most allowed)' : ''}, or{' '}
          <Link href={SETTINGS_HREF}>manage your feeds in Settings</Link>.
        </div>
      ) : (
        <p className="small muted">
          Your feeds are listed, and can be revoked, in <Link href={SETTINGS_HREF}>Settings → Calendar feeds</Link>.
        </p>
      )}
    </>
  );
}
