'use client';

import { DEFAULT_NOTICE_REMINDER_DAYS } from '@/lib/calendar';
import { MAX_ACTIVE_TOKENS } from '@/lib/tokens';
import { trpc } from '../trpc-client';
import { AccessDialog, accessText } from './access-dialog';
import { CreateCalendarFeedDialog, NewCalendarFeedDialog, type CreatedFeed } from './calendar-feed-dialogs';
import type { OrganizationChoice } from './restriction-fields';
import { TokenManager } from './token-manager';
import { toTokenRow, type TokenRow } from './types';

/** The feed's reminder as the create dialog offered it. */
const reminderText = (days: number) => (days === 0 ? 'Reminds on each notice deadline' : `Reminds ${days} days before each notice deadline`);

const loadFeeds = async () => (await trpc.calendarFeeds.list.query()).map(toTokenRow);
const revokeFeed = (id: string) => trpc.calendarFeeds.revoke.mutate({ id });

export function CalendarFeedsManager({ initialFeeds, organizations }: { initialFeeds: TokenRow[]; organizations: OrganizationChoice[] }) {
  return (
    <TokenManager<CreatedFeed>
      initialRows={initialFeeds}
      maxActive={MAX_ACTIVE_TOKENS.calendar_feed}
      showExpiry={false}
      load={loadFeeds}
      revoke={revokeFeed}
      renderRestrictions={(row) => (
        <>
          <span className="small" data-testid="feed-access">
            Reads: {accessText(row.access, organizations)}
          </span>{' '}
          <span className="small" data-testid="feed-reminder">
            · {reminderText(row.noticeReminderDays ?? DEFAULT_NOTICE_REMINDER_DAYS)}
          </span>
        </>
      )}
      rowActions={[
        {
          label: 'Change access',
          render: (row, { onClose, refresh }) => (
            <AccessDialog
              title={`What “${row.name}” reads`}
              intro="The feed's address stays the same; calendar apps get the new set of dates when they next fetch it."
              initial={row.access}
              organizations={organizations}
              onClose={onClose}
              save={async (access) => {
                await trpc.calendarFeeds.setAccess.mutate({ id: row.id, access });
                onClose();
                await refresh();
              }}
            />
          ),
        },
      ]}
      text={{
        plural: 'calendar feeds',
        singular: 'calendar feed',
        countNoun: 'feeds',
        emptyText:
          'Create a feed and subscribe to it in Google Calendar, Outlook or Apple Calendar to see every notice deadline, renewal and expiration date next to your meetings.',
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
      renderCreate={({ onClose, onCreated }) => <CreateCalendarFeedDialog organizations={organizations} onClose={onClose} onCreated={onCreated} />}
      renderCreated={(created, onClose) => <NewCalendarFeedDialog feed={created} onClose={onClose} />}
    />
  );
}
