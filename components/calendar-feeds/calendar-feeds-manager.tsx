'use client';

import { useState } from 'react';
import { FEED_NAME_MAX_LENGTH, MAX_ACTIVE_FEEDS } from '@/server/calendar/constants';
import { DateOnly, RelativeTime } from '../api-keys/time';
import { trpc } from '../trpc-client';
import { CreateDialog } from '@/components/create-dialog';
import { ErrorAlert } from '@/components/error-alert';
import { useFocusReturn, useRefreshableList } from '@/components/managed-list';
import { RevokeDialog } from '@/components/revoke-dialog';
import { SecretOnceDialog } from '@/components/secret-once-dialog';
import { toFeedRow, type CalendarFeedRow } from './types';

interface CreatedFeed {
  name: string;
  url: string;
  webcalUrl: string;
}

const loadFeeds = async () => (await trpc.calendarFeeds.list.query()).map(toFeedRow);

export function CalendarFeedsManager({ initialFeeds }: { initialFeeds: CalendarFeedRow[] }) {
  const { rows: feeds, listError, refresh } = useRefreshableList(initialFeeds, loadFeeds);
  const [creating, setCreating] = useState(false);
  const [created, setCreated] = useState<CreatedFeed | null>(null);
  const [revoking, setRevoking] = useState<CalendarFeedRow | null>(null);
  const activeCount = feeds.filter((f) => f.status === 'active').length;
  const createButton = useFocusReturn(creating || created !== null || revoking !== null);

  return (
    <>
      <ErrorAlert message={listError} />
      <div className="card">
        <div className="card-body" style={{ display: 'flex', justifyContent: 'space-between', alignItems: 'center', gap: '1rem' }}>
          <div>
            <h2 style={{ marginBottom: 0 }}>Your calendar feeds</h2>
            <p className="muted small" style={{ margin: 0 }}>
              {activeCount} of {MAX_ACTIVE_FEEDS} active feeds
            </p>
          </div>
          <button ref={createButton} type="button" className="btn btn-primary" onClick={() => setCreating(true)}>
            Create calendar feed
          </button>
        </div>
        {feeds.length === 0 ? (
          <div className="empty" style={{ borderTop: '1px solid var(--border)' }}>
            <h2>No calendar feeds yet</h2>
            <p className="muted">
              Create a feed and subscribe to it in Google Calendar, Outlook or Apple Calendar to see every renewal and expiration
              date next to your meetings.
            </p>
            <button type="button" className="btn btn-primary" onClick={() => setCreating(true)}>
              Create your first calendar feed
            </button>
          </div>
        ) : (
          <div style={{ overflowX: 'auto', borderTop: '1px solid var(--border)' }}>
            <table className="data" aria-label="Calendar feeds">
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Feed</th>
                  <th scope="col">Created</th>
                  <th scope="col">Last used</th>
                  <th scope="col">Status</th>
                  <th scope="col">
                    <span className="visually-hidden">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {feeds.map((feed) => (
                  <tr key={feed.id} data-testid="calendar-feed-row">
                    <td style={{ fontWeight: 600 }}>{feed.name}</td>
                    <td>
                      <code>{feed.hint}</code>
                    </td>
                    <td>
                      <DateOnly iso={feed.createdAt} fallback="" />
                    </td>
                    <td>
                      <RelativeTime iso={feed.lastUsedAt} fallback="Never" />
                    </td>
                    <td>
                      <span className={`badge badge-${feed.status}`}>{feed.status === 'active' ? 'Active' : 'Revoked'}</span>
                    </td>
                    <td className="num">
                      {feed.status === 'revoked' ? null : (
                        <button
                          type="button"
                          className="btn btn-ghost btn-sm"
                          onClick={() => setRevoking(feed)}
                          aria-label={`Revoke ${feed.name}`}
                        >
                          Revoke
                        </button>
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </div>

      {creating ? (
        <CreateDialog
          title="Create calendar feed"
          submitLabel="Create feed"
          nameMaxLength={FEED_NAME_MAX_LENGTH}
          namePlaceholder="e.g. Work calendar"
          nameHint={`Where you will subscribe to it, so you recognise it later (1 to ${FEED_NAME_MAX_LENGTH} characters).`}
          onClose={() => setCreating(false)}
          onSubmit={async (name) => {
            const result = await trpc.calendarFeeds.create.mutate({ name });
            setCreating(false);
            setCreated({ name: result.feed.name, url: result.url, webcalUrl: result.webcalUrl });
            await refresh();
          }}
        />
      ) : null}

      {created ? (
        <SecretOnceDialog
          title="Your new calendar feed"
          intro={
            <>
              The feed <strong>{created.name}</strong> is ready.
            </>
          }
          warning={
            <>
              Copy the address now: it will not be shown again. Anyone who has it can read your contracts&rsquo; renewal and
              expiration dates, so share it only with your calendar app.
            </>
          }
          secret={created.url}
          secretTestId="new-calendar-feed-url"
          copyFailedText="Copying failed: the address is selected, press Ctrl+C."
          doneLabel="I have saved the address"
          // After this, the address exists nowhere: only its hint is listed.
          onClose={() => setCreated(null)}
        >
          <p>
            <a className="btn" href={created.webcalUrl}>
              Subscribe in your calendar app
            </a>
          </p>
          <p className="small muted">
            Or paste the address into Google Calendar (Other calendars → From URL), Outlook (Add calendar → Subscribe from web)
            or Apple Calendar (File → New Calendar Subscription). Calendar apps fetch it again every few hours.
          </p>
        </SecretOnceDialog>
      ) : null}

      {revoking ? (
        <RevokeDialog
          name={revoking.name}
          confirmLabel="Revoke feed"
          onClose={() => setRevoking(null)}
          onConfirm={async () => {
            await trpc.calendarFeeds.revoke.mutate({ id: revoking.id });
            setRevoking(null);
            await refresh();
          }}
        >
          <p>
            The address of <code>{revoking.hint}</code> stops working at once: calendar apps subscribed to it get no further
            updates, and some keep the events they already show until you remove the subscription. This cannot be undone; the
            feed stays listed as revoked.
          </p>
        </RevokeDialog>
      ) : null}
    </>
  );
}
