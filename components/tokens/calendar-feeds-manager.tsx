'use client';

import { MAX_ACTIVE_TOKENS } from '@/lib/tokens';
import { trpc } from '../trpc-client';
import { CreateCalendarFeedDialog, NewCalendarFeedDialog, type CreatedFeed } from './calendar-feed-dialogs';
import { TokenManager } from './token-manager';
import { toTokenRow, type TokenRow } from './types';

const loadFeeds = async () => (await trpc.calendarFeeds.list.query()).map(toTokenRow);
const revokeFeed = (id: string) => trpc.calendarFeeds.revoke.mutate({ id });

export function CalendarFeedsManager({ initialFeeds }: { initialFeeds: TokenRow[] }) {
  return (
    <TokenManager<CreatedFeed>
      initialRows={initialFeeds}
      maxActive={MAX_ACTIVE_TOKENS.calendar_feed}
      showExpiry={false}
      load={loadFeeds}
      revoke={revokeFeed}
      text={{
        plural: 'calendar feeds',
        singular: 'calendar feed',
        countNoun: 'feeds',
        emptyText:
          'Create a feed and subscribe to it in Google Calendar, Outlook or Apple Calendar to see every renewal and expiration date next to your meetings.',
        rowTestId: 'calendar-feed-row',
        revokeLabel: 'Revoke feed',
        revokeText: (feed) => (
          <>
            The address of <code>{feed.hint}</code> stops working at once: calendar apps subscribed to it get no further updates,
            and some keep the events they already show until you remove the subscription. This cannot be undone; the feed stays
            listed as revoked.
          </>
        ),
      }}
      renderCreate={({ onClose, onCreated }) => <CreateCalendarFeedDialog onClose={onClose} onCreated={onCreated} />}
      renderCreated={(created, onClose) => <NewCalendarFeedDialog feed={created} onClose={onClose} />}
    />
  );
}
